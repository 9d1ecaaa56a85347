"""@TITLE@: the page's explanatory figure, drawn from the kernel's own launch shape."""
from __future__ import annotations

#: threads a block (the launch in experiments.py)
BLOCK = 256


def threads_figure(n: int = 1000, block: int = BLOCK, shown: int = 4):
    """Which block and thread computes each element: element i is thread i % block of
    block i // block; the last block's threads past n do nothing (the bounds check)."""
    import matplotlib.pyplot as plt
    blocks = -(-n // block)
    fig, ax = plt.subplots(figsize=(6.5, 1.6))
    for b in range(min(blocks, shown)):
        used = min(block, n - b * block)
        ax.barh(0, used, left=b * block, color="C0" if b % 2 == 0 else "C1", height=0.6)
        if used < block:
            ax.barh(0, block - used, left=b * block + used, color="0.85", height=0.6)
        ax.text(b * block + block / 2, 0, f"block {b}", ha="center", va="center",
                color="white" if used == block else "black", fontsize=9)
    ax.set_yticks([])
    ax.set_xlabel(f"element index (n = {n}, {block} threads a block, {blocks} blocks; "
                  "grey: threads past n)", fontsize=9)
    fig.tight_layout()
    return fig
