"""Tooling built from whole runs: the paper's tables, `osworld verify`, the fidelity and VM parity
suites, throughput.
"""
