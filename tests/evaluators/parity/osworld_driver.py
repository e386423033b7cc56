"""Calls OSWorld's own metric functions on the cases it is given: its `desktop_env` as this interpreter
finds it (the desktop-env package of the reference venv, tests/osworld_reference.py, or a checkout on
PYTHONPATH).

Run by test_osworld_parity.py under the reference's interpreter, never imported by our code: this file
imports OSWorld's `desktop_env`, which shares its name with ours. A module a metric imports when it
runs and that is not installed stops the run (ModuleNotFoundError), as one missing at the top does:
reported as that metric raising, it would pass for OSWorld's verdict.

Reads a JSON list of calls on stdin and writes one JSON list of outcomes on stdout, in the same order:

    call:    {"metric": name, "args": [result, expected?], "options": {...}}
             {"evaluate": evaluator block, "last_action": action or null, "values": {...}}
    outcome: {"score": float} | {"returned": repr} (not a number) | {"error": "Type: message"}
             | {"absent": reason} (this version of OSWorld's code has no such metric)

An `evaluate` call runs OSWorld's DesktopEnv.evaluate (conj, infeasible, FAIL) on a DesktopEnv
made without a desktop, its evaluator read by OSWorld's own _set_evaluator_info: its getters are
then replaced by lookups in `values` (a getter config's `name` -> the value; the name `missing`
raises FileNotFoundError as a missing file does), its setup controller by one that runs no
postconfig step.
"""
import contextlib
import importlib
import io
import json
import logging
import math
import os
import sys
import types


def number(value):
    if isinstance(value, bool):
        return float(value)
    try:
        score = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(score) else score


def outcome_of(run):
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # OSWorld's metrics print as they go
            value = run()
    except ModuleNotFoundError:
        raise
    except Exception as e:  # noqa: BLE001  every exception is an outcome to report
        return {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    score = number(value)
    return {"score": score} if score is not None else {"returned": repr(value)[:300]}


class NoPostconfig:
    def setup(self, steps, *args, **kwargs):
        if steps:
            raise RuntimeError("the parity driver runs no postconfig step")


def lookup_getter(values):
    def get(env, config):
        name = config["name"]
        if name == "missing":
            raise FileNotFoundError(name)
        return values[name]
    return get


def osworld_evaluate(call):
    from desktop_env.desktop_env import DesktopEnv

    env = DesktopEnv.__new__(DesktopEnv)
    env._set_evaluator_info({"evaluator": call["evaluate"]})
    getter = lookup_getter(call["values"])

    def looked_up(getters):
        if isinstance(getters, list):
            return [getter if g else None for g in getters]
        return getter if getters else None

    env.result_getter = looked_up(env.result_getter)
    env.expected_getter = looked_up(env.expected_getter)
    env.action_history = [] if call["last_action"] is None else [call["last_action"]]
    env.setup_controller = NoPostconfig()
    env.enable_proxy = False
    env.is_environment_used = False
    return env.evaluate()


class Unavailable(types.ModuleType):
    """Stands in for a module OSWorld's metrics import at the top but only one metric uses (easyocr,
    for compare_image_text, needs torch and torchvision): that metric raises, the others run."""

    def __getattr__(self, name):
        raise ImportError(f"{self.__name__} cannot be imported here: {self.__doc__}")


def import_or_stand_in(name):
    try:
        importlib.import_module(name)
    except Exception as e:  # noqa: BLE001  torchvision raises RuntimeError when its ops do not load
        module = Unavailable(name)
        module.__doc__ = f"{type(e).__name__}: {e}"
        sys.modules[name] = module


def main():
    logging.disable(logging.CRITICAL)
    calls = json.load(sys.stdin)
    import_or_stand_in("easyocr")
    import desktop_env.evaluators.metrics as metrics

    here = os.getcwd()
    outcomes = []
    for call in calls:
        if "evaluate" in call:
            outcomes.append(outcome_of(lambda call=call: osworld_evaluate(call)))
        elif not hasattr(metrics, call["metric"]):  # a metric newer than this version of OSWorld's code
            outcomes.append({"absent": f"desktop_env.evaluators.metrics has no {call['metric']}"})
        else:
            fn = getattr(metrics, call["metric"])
            outcomes.append(outcome_of(lambda fn=fn, call=call: fn(*call["args"], **call["options"])))
        os.chdir(here)  # a metric that changed directory and failed does not move the next one
    json.dump(outcomes, sys.stdout)


if __name__ == "__main__":
    main()
