"""maxrepeat: the max-repeat loop grader for LLM agent trajectories."""
from ._config import MaxRepeatConfig
from ._grade import grade, steps
