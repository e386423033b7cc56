"""Task files (OSWorld's format): loading, indexing by meta files, validation."""
from ..errors import TaskFileError
from .loader import Task, TaskSet, UnknownSelection, load_task, load_task_set
from .validation import Problem, listing_problems, refusals, selection_problems, task_problems, validate_task

__all__ = ["Task", "TaskFileError", "TaskSet", "UnknownSelection", "load_task", "load_task_set", "Problem",
           "listing_problems", "refusals", "selection_problems", "task_problems", "validate_task"]
