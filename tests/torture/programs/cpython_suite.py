"""CPython's own regression tests (Debian's libpython3.11-testsuite) for the torture suite: runs the
named test modules one after another in this process, the way `python3 -m test` runs one worker,
and writes one line per test to OUT_FILE: its id and outcome (ok, FAIL, ERROR, skip, xfail, xpass).
A traced run must write the same file as an untraced one. Resources that need the network, a GUI
or minutes of CPU are off, as in a default `python3 -m test` run.
Usage: python3.11 cpython_suite.py OUT_FILE test_module..."""
import importlib
import io
import os
import sys
import time
import unittest

def main():
    out_path, modules = sys.argv[1], sys.argv[2:]
    from test import support
    support.use_resources = []   # no network, no cpu-hungry or GUI resources
    support.verbose = 0
    lines = []
    timing = []
    for name in modules:
        start = time.monotonic()
        result = Outcomes()
        # What the tests print (and warnings at import) is not compared: only outcomes are.
        saved = os.dup(1), os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1); os.dup2(devnull, 2)
        saved_streams = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()
        try:
            try:
                module = importlib.import_module("test." + name)
                suite = unittest.defaultTestLoader.loadTestsFromModule(module)
                suite.run(result)
            except unittest.SkipTest:
                result.outcomes.append((name, "module-skip"))
        finally:
            sys.stdout, sys.stderr = saved_streams
            os.dup2(saved[0], 1); os.dup2(saved[1], 2)
            os.close(devnull); os.close(saved[0]); os.close(saved[1])
        lines.extend(f"{test_id} {outcome}" for test_id, outcome in result.outcomes)
        timing.append((name, time.monotonic() - start, result.count))
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    for name, seconds, count in timing:
        print(f"{name} {count} tests", file=sys.stdout)
    if os.environ.get("CPYTHON_SUITE_TIMES"):
        sys.stderr.write("".join(f"{n} {s:.2f}s\n" for n, s, c in timing))

class Outcomes(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.outcomes = []
        self.count = 0
    def _add(self, test, outcome):
        self.outcomes.append((test.id(), outcome)); self.count += 1
    def addSuccess(self, test): self._add(test, "ok")
    def addFailure(self, test, err): self._add(test, "FAIL")
    def addError(self, test, err): self._add(test, "ERROR")
    def addSkip(self, test, reason): self._add(test, "skip")
    def addExpectedFailure(self, test, err): self._add(test, "xfail")
    def addUnexpectedSuccess(self, test): self._add(test, "xpass")
    def addSubTest(self, test, subtest, err):
        if err is not None:
            self._add(subtest, "FAIL" if issubclass(err[0], test.failureException) else "ERROR")

main()
