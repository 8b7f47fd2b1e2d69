import json
import sys

from django.core.management.base import BaseCommand, CommandError

from agents.resume import MalformedInput, case_evaluate


class Command(BaseCommand):
    help = (
        "Judge one resume: FILE holds {checkpoint, context, receipts: {operation id: {tool, target, params}}} "
        "(receipts are looked up in that map). Prints the result as one JSON object; exit 0 for any verdict, "
        "2 for malformed input. '-' reads standard input."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="The case, as JSON ('-' for standard input).")

    def handle(self, *args, file, **options):
        try:
            text = sys.stdin.read() if file == "-" else open(file, encoding="utf-8").read()
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}.", returncode=2) from None
        try:
            case = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CommandError(f"{file} is not JSON: {exc}.", returncode=2) from None
        try:
            result = case_evaluate(case)
        except MalformedInput as exc:
            raise CommandError(f"Malformed input: {exc}", returncode=2) from None
        self.stdout.write(json.dumps(result.to_json(), ensure_ascii=False))
