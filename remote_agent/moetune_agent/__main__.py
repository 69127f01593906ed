import sys

from moetune_agent.cli import main

if __name__ == "__main__":
    sys.exit(main())
