"""Running tasks: the plan of a run, the one scheduling loop over its backends (worker processes,
threads, Ray actors), one desktop's worker, one episode and its recording as it goes, whose fault
a failure is, and stopping a run that cannot succeed.
"""
