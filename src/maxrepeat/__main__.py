"""``python -m maxrepeat``: the command line (as the ``maxrepeat`` script)."""

from .cli import main

if __name__ == "__main__":
    main()
