"""The test suite (a package, so that plain ``pytest`` resolves the ``tests.`` helper imports from the root)."""
