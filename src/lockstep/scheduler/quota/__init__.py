"""Quotas and fair share: the organisation's units, their quotas per pool, the fair shares
computed from them, and the books a cycle keeps of what each unit holds and asks."""
