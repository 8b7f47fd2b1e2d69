"""Append one event from a separate process: `python -m tests.support.append_event <workspace_id> <kind>`.

Stands in for a worker process (a qcluster job, a management command) in the realtime tests. Prints the
sequence it got.
"""

import os
import sys


def main(argv: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lomote.settings")
    import django

    django.setup()
    from tests.support.jobs import append_event

    workspace_id, kind = int(argv[1]), argv[2]
    seq = append_event(workspace_id, kind, {"pid": os.getpid()})
    print(seq)  # the parent test reads it
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
