"""django-q2 jobs. Thin: they carry ids and call the runtime."""

from agents.runtime.loop import turn_run


def run_turn(turn_id: int, generation: int) -> str:
    return turn_run(turn_id=turn_id, generation=generation)
