"""pytest set-up for runs from the source tree (after `maturin develop`)."""
pytest_plugins = ["tests.plexus_test_names"]
