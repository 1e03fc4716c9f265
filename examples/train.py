"""A single-node training with nothing to install: fits y = 3x + 2 to noisy points by gradient
descent in plain Python, printing the loss as it goes, and exits 0 only when the fitted line is
the true one (the README's `lockstep training submit fit … -- python examples/train.py`).

`EPOCHS` and `LEARNING_RATE` (environment variables) change the run."""

from __future__ import annotations

import os
import random
import sys

SLOPE, INTERCEPT = 3.0, 2.0
TOLERANCE = 0.1


def main() -> int:
    epochs = int(os.environ.get("EPOCHS", "200"))
    rate = float(os.environ.get("LEARNING_RATE", "0.5"))
    rng = random.Random(0)  # noqa: S311 (noise for the data, not a secret)
    points = [
        (x, SLOPE * x + INTERCEPT + rng.gauss(0, 0.05)) for x in (i / 100 for i in range(100))
    ]
    slope = intercept = 0.0
    for epoch in range(1, epochs + 1):
        errors = [(slope * x + intercept - y, x) for x, y in points]
        loss = sum(error * error for error, _ in errors) / len(points)
        slope -= rate * 2 * sum(error * x for error, x in errors) / len(points)
        intercept -= rate * 2 * sum(error for error, _ in errors) / len(points)
        if epoch % 50 == 0 or epoch == 1:
            print(f"epoch {epoch}: loss {loss:.5f}", flush=True)
    print(f"fitted y = {slope:.3f}x + {intercept:.3f} (true: y = {SLOPE}x + {INTERCEPT})")
    fitted = abs(slope - SLOPE) < TOLERANCE and abs(intercept - INTERCEPT) < TOLERANCE
    return 0 if fitted else 1


if __name__ == "__main__":
    sys.exit(main())
