"""The article the series tests: what it is, and where its claims are restated.

It is an untitled Chinese blog post on splitting deep-RL training between CPU and
GPU. Its checkable claims are restated, one by one and in its order, as the data of
:data:`hetero_tutorial.ledger.claims.CLAIMS`: each with the article's statement and
figure, the measurement that answers it, and the rule that judges it.
"""

ARTICLE = {
    "title": "深度强化学习中的异构计算挑战 (untitled post; its first section's heading)",
    "title_english": "Heterogeneous computing challenges in deep reinforcement learning",
    "language": "Chinese",
    "sections": (
        "1. 深度强化学习中的异构计算挑战 (heterogeneous computing in deep RL)",
        "2. PPO算法的设备协同实战 (CPU and GPU working together in PPO, in practice)",
        "3. 经验池设计的设备优化策略 (device strategies for replay-buffer design)",
        "4. 动态设备分配的高级技巧 (advanced techniques for dynamic device allocation)",
    ),
}
"""The source article: it has no title of its own, so it is named by its first heading."""

C8_SECONDS_PER_ROUND = {"pattern A (transition)": 72.0, "pattern B (trajectory)": 53.0}
"""The article's seconds per DDPG training round with each buffer (claim C8's figures)."""
