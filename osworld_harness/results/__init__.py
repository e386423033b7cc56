"""What a run leaves and reading it back: a task's folder and status.json, the options a run was made
with as args.json records them (which of them make runs comparable, the command that makes one
again), summaries with their statistics, comparisons, the HTML report and rescoring. Imports
nothing of execution or experiments.
"""
