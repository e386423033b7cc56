"""Cases for the parity test (test_osworld_parity.py): real files and the values getters give,
each one passed to OSWorld's metric function and ours with the options OSWorld's task files pass."""
