"""Write ``src/corral/agents/_pins_data.py``: pins.toml parsed, with the text it came from.

    python scripts/gen_pins_data.py          # after editing src/corral/agents/pins.toml

``corral.agents`` uses the parsed copy while pins.toml still has that text (no ``tomllib`` on
``corral launch``'s start-up) and parses pins.toml itself otherwise; a unit test checks the copy
is current (``tests/unit/agents/test_pins_data.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from corral.agents._pins_render import write_data

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "src" / "corral" / "agents" / "pins.toml"
OUT = PINS.with_name("_pins_data.py")


def main() -> int:
    write_data(PINS)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
