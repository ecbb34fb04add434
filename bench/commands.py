"""Runs the harness's commands: each printed as it starts (long token
lists shortened), recorded for the results, and a failure raised with the
end of its output."""
import os
import subprocess
import time

# Paths inside the checkout are shown relative to it: shorter, and the same
# on every machine.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class CommandFailed(RuntimeError):
    pass


def shown(command):
    words = [w.replace(ROOT, "") for w in map(str, command)]
    words = [w if len(w) <= 80 else w[:60] + f"...({len(w)} chars)" for w in words]
    return " ".join(words)


class Commands:
    def __init__(self):
        self.log = []  # [{"command", "seconds", "rc"}]

    def __call__(self, command, timeout=None, with_stderr=False):
        """The command's stdout, or (stdout, stderr) `with_stderr`."""
        text = shown(command)
        print("$", text, flush=True)
        started = time.time()
        try:
            done = subprocess.run([str(w) for w in command], capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            self.log.append({"command": text, "seconds": time.time() - started, "rc": "timeout"})
            raise CommandFailed(f"{text}: no answer within {timeout} s")
        self.log.append({"command": text, "seconds": round(time.time() - started, 2),
                         "rc": done.returncode})
        if done.returncode != 0:
            raise CommandFailed(f"{text}: exit {done.returncode}\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
        return (done.stdout, done.stderr) if with_stderr else done.stdout
