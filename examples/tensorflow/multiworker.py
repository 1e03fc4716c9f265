"""A few synchronous training steps with tf.distribute.MultiWorkerMirroredStrategy across every
task of a TF distributed workload.

Runs unchanged under lockstep's local runtime and under the Kubeflow TFJob operator, which both
set TF_CONFIG; the strategy reads it, starts this task's gRPC server on its own address and
all-reduces across the chief and every worker. Each task contributes different data (it
depends on the task's position in the cluster), so the models stay identical only if the
gradients really are averaged across tasks. The example checks that

- an all-gather of each task's position in the cluster gives 0, 1, ..., TASKS - 1,
- after the steps, every task holds the same weights (an all-gather of their checksums gives
  one value), and the loss went down,

prints one line naming the task and what it got, and exits 0 only when all hold.

    submit with: distributedFramework "TF", command "python",
                 args "examples/tensorflow/multiworker.py"
"""

from __future__ import annotations

import json
import os
import sys

import tensorflow as tf

STEPS = 3
LEARNING_RATE = 0.1


def main() -> int:
    config = json.loads(os.environ["TF_CONFIG"])
    kind, index = config["task"]["type"], int(config["task"]["index"])
    kinds = sorted(config["cluster"])
    tasks = sum(len(config["cluster"][k]) for k in kinds)
    position = sum(len(config["cluster"][k]) for k in kinds[: kinds.index(kind)]) + index

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        weights = tf.Variable(
            tf.zeros([4, 1]), aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA
        )

    # The same target on every task, but different inputs per task.
    true_weights = tf.constant([[1.0], [-2.0], [3.0], [0.5]])
    inputs = tf.random.stateless_normal([64, 4], seed=[position, 7])
    targets = tf.matmul(inputs, true_weights)

    @tf.function
    def step() -> tf.Tensor:
        def replica_step() -> tf.Tensor:
            context = tf.distribute.get_replica_context()
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(inputs, weights) - targets))
            gradient = context.all_reduce(tf.distribute.ReduceOp.MEAN, tape.gradient(loss, weights))
            weights.assign_sub(LEARNING_RATE * gradient)
            return context.all_reduce(tf.distribute.ReduceOp.MEAN, loss)

        return strategy.run(replica_step)

    @tf.function
    def gather(value: tf.Tensor) -> tf.Tensor:
        """Every task's `value`, in task order."""

        def replica_fn(local: tf.Tensor) -> tf.Tensor:
            context = tf.distribute.get_replica_context()
            return context.all_gather(tf.reshape(local, [1]), axis=0)

        return strategy.run(replica_fn, args=(value,))

    losses = [float(step()) for _ in range(STEPS)]
    positions = [int(p) for p in gather(tf.constant(position)).numpy()]
    checksum = tf.reduce_sum(weights * tf.constant([[1.0], [10.0], [100.0], [1000.0]]))
    checksums = [float(c) for c in gather(checksum).numpy()]
    agree = len(checksums) == tasks and len(set(checksums)) == 1
    correct = positions == list(range(tasks)) and agree and losses[-1] < losses[0]

    host = os.environ.get("HOSTNAME", "?")
    print(
        f"{kind} {index} of {tasks} tasks on {host}: positions {positions}, "
        f"weights {'agree' if agree else 'DIFFER'} across tasks, "
        f"loss {losses[0]:.3f} -> {losses[-1]:.3f}"
    )
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
