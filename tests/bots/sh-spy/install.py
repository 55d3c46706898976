"""Test image part: put spy.py in place of /bin/sh and setpriv (each kept as NAME.real).
Run once by the image's Dockerfile, in exec form (its /bin/sh is gone after)."""

import os
import shutil

for program in ("/bin/sh", "/usr/bin/setpriv"):
    real = os.path.realpath(program)
    shutil.copy2(real, program + ".real")
    os.unlink(program)
    shutil.copy2("/spy/spy.py", program)
    os.chmod(program, 0o755)
