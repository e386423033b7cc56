"""The harness's library under the `osworld` command, in three parts: execution/ runs tasks on desktops,
results/ is what a run leaves and what reads it back, experiments/ is tooling built from whole runs.
Arrows go experiments -> execution -> results (and experiments -> results), never back.
"""
