"""Collection settings of the whole repository (the suite's own fixtures are in tests/conftest.py)."""

# Their only docstring example is marked +SKIP (it needs an export and a corpus); collecting it imported llama_index
# and langchain_core (~2.3 s of CPU) in every xdist worker. tests/deploy_tests/test_adapters.py imports and tests both.
collect_ignore = ["tuner/deploy/llamaindex.py", "tuner/deploy/langchain.py"]
