"""python -m perflab COMMAND — see `python -m perflab --help`."""
from .cli import main

raise SystemExit(main())
