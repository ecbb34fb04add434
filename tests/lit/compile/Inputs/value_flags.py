"""Every option that a command's --help shows taking a value (--flag=VALUE
or --flag VALUE, not an optional [=VALUE]) is one mkc accepts as
"--flag VALUE" too: given alone, mkc names it as needing a value, as it
does for each flag it joins with the next argument."""
import re
import subprocess
import sys

mkc = sys.argv[1]
checked = 0
for command in ("compile", "inspect", "eval"):
    help_text = subprocess.run([mkc, command, "--help"], capture_output=True,
                               text=True, check=True).stdout
    flags = sorted(set(re.findall(r"^\s+(--[a-z-]+)[= ][A-Za-z]", help_text, re.M)))
    for flag in flags:
        run = subprocess.run([mkc, command, flag], capture_output=True, text=True)
        expected = f"option '{flag}' needs a value"
        if run.returncode == 0 or expected not in run.stderr:
            print(f"mkc {command} {flag}: not taken as a value flag: {run.stderr.strip()[:200]}")
            sys.exit(1)
        checked += 1
print(f"value flags: {checked} checked")
