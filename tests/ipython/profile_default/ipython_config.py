# IPython settings for kernels started by the test targets (the Makefile sets IPYTHONDIR here).
# nbval never compares tracebacks (only the error's type and message), and IPython's default
# "Context" tracebacks read and highlight the source of every frame: over a second per error
# that passes through PyTorch's Python code. Minimal tracebacks keep the suite fast and check
# exactly the same things. Stored outputs (make outputs) keep the full tracebacks readers see.
c = get_config()  # noqa: F821
c.InteractiveShell.xmode = "Minimal"
c.HistoryManager.enabled = False
