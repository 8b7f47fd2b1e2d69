import os
import signal
import subprocess
import sys
import time

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Serve the studio with daphne beside a django-q2 cluster, the runtime watchdog and the generation "
        "sweeper; Ctrl-C stops all."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", default="8000")

    def handle(self, *args, host, port, **options):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        manage = [sys.executable, "manage.py"]
        children = [
            subprocess.Popen(
                [sys.executable, "-m", "daphne", "-b", host, "-p", str(port), "lomote.asgi:application"], env=env
            ),
            subprocess.Popen([*manage, "qcluster"], env=env),
            subprocess.Popen([*manage, "watchdog"], env=env),
            subprocess.Popen([*manage, "generation_sweeper"], env=env),
        ]
        self.stdout.write(
            f"Studio on http://{host}:{port}/ with a qcluster, the watchdog and the generation sweeper; "
            "Ctrl-C stops all."
        )

        def stop(*_):
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)

        signal.signal(signal.SIGTERM, stop)
        try:
            while all(child.poll() is None for child in children):
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            stop()
            deadline = time.monotonic() + 15
            for child in children:
                try:
                    child.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    child.kill()
        failed = [
            name
            for name, c in zip(("daphne", "qcluster", "watchdog", "generation_sweeper"), children, strict=True)
            if c.returncode not in (0, -15)
        ]
        if failed:
            self.stderr.write(f"stopped: {', '.join(map(str, failed))} exited with an error")
