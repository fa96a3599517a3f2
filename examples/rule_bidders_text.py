"""Rule bidders against a bidder that answers in free text, as an LLM would.

The text bidder opens every item at its starting price and then withdraws; its replies go through
the environment's parser like any model's output.
"""
from arena_envs import auction_v0
from baselines.auction.rule import RuleBidder

env = auction_v0.env(item_order="ascending", render_mode="ansi")
env.reset(seed=1)
rules = {"bidder_1": RuleBidder(), "bidder_2": RuleBidder(K=2)}
for agent, policy in rules.items():
    policy.bind(env.unwrapped)
    policy.reset(agent, seed=1)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    if termination or truncation:
        env.step(None)
    elif agent in rules:
        env.step(rules[agent].act(obs, info))
    elif info["highest_bid"] is None:
        env.step(f"Let me open. I bid ${info['start_price']}!")
    else:
        env.step("Too rich for me. I'm out!")
print(env.render())
