"""What each boot of the local desktop does: the sandbox's command line and storage, its uid and root inside,
the boot sequence itself (sequence.py), and killing what a boot leaves."""
