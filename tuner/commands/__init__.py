"""Command line (**CLI** → public package names): one module per CLI sub-command: ``HELP``, ``add_arguments(parser)``
and ``run(args) -> exit code``.

Modules import only the standard library at import time so ``tuner --help`` stays fast.
"""
