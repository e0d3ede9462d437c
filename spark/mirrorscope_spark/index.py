"""The `index` job: the analysis of the other jobs imported into the data
folder, and its search index built in shards by Spark tasks.

1. On the driver, `mirrorscope import-analysis OUT --index-shards N` computes
   the rest of the analysis on what the jobs wrote and stages the new
   generation: its tables written, its index not yet built.
2. Each of N tasks runs `mirrorscope index-shard STAGED --shard K --of N`:
   the Rust code builds shard K (the pages whose body's signature falls in
   it) into the staged generation's folder. A task run twice (retried,
   speculative) finds its shard built and leaves it.
3. On the driver, `mirrorscope publish STAGED` checks every shard is there
   and makes the generation current; `serve` reads the shards as one index.

The data folder must be at the same path on every worker (a shared file
system, or one machine), and `mirrorscope` runnable there.
"""

import os
import signal
import subprocess
import sys
import time


def _die_with_parent():
    """In the child, before it runs: killed when the Python worker that
    started it dies (Spark killing a task kills the worker, not its
    children), so an abandoned attempt does not go on beside its retry."""
    import ctypes

    try:
        # PR_SET_PDEATHSIG
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def mirrorscope(binary, *arguments):
    """Runs `binary` with `arguments`; its standard output, or an error
    with its standard error."""
    done = subprocess.run(
        [binary, *arguments],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"`mirrorscope {' '.join(arguments)}` exited {done.returncode}:\n{done.stderr[-6000:]}"
        )
    return done.stdout


def shard_task(binary, data, staged, shards):
    """What a task runs for shard `number` (a function of its number only,
    as a task is retried with the same one)."""

    def build(number):
        started = time.monotonic()
        printed = mirrorscope(
            binary,
            "index-shard",
            staged,
            "--shard",
            str(number),
            "--of",
            str(shards),
            "--data",
            data,
        )
        return {
            "shard": number,
            "printed": printed.strip(),
            "seconds": round(time.monotonic() - started, 1),
            # An executor works in a folder of its own: where the shard was
            # built.
            "executor": os.getcwd(),
        }

    return build


def run(spark, binary, data, analysis, shards):
    """Imports `analysis` into the data folder `data` with its index built
    in `shards` Spark tasks; returns the job's figures."""
    if shards < 1:
        raise ValueError("an index has at least one shard")
    binary = os.path.abspath(binary) if os.sep in binary else binary
    data = os.path.abspath(data)
    started = time.monotonic()
    printed = mirrorscope(
        binary,
        "import-analysis",
        os.path.abspath(analysis),
        "--data",
        data,
        "--index-shards",
        str(shards),
    )
    staged = printed.splitlines()[0].strip()
    if not staged.startswith("staged-"):
        raise RuntimeError(f"import-analysis staged no generation:\n{printed}")
    imported = round(time.monotonic() - started, 1)
    figures = build_and_publish(spark, binary, data, staged, shards)
    figures["import_seconds"] = imported
    figures["seconds"] = round(time.monotonic() - started, 1)
    return figures


def build_and_publish(spark, binary, data, staged, shards):
    """Builds the `shards` shards of the staged generation `staged` as
    Spark tasks, then publishes it; returns the figures."""
    started = time.monotonic()
    built = (
        spark.sparkContext.parallelize(range(shards), shards)
        .map(shard_task(binary, data, staged, shards))
        .collect()
    )
    built.sort(key=lambda shard: shard["shard"])
    shards_seconds = round(time.monotonic() - started, 1)
    published = mirrorscope(binary, "publish", staged, "--data", data).strip()
    return {
        "staged": staged,
        "published": published,
        "shards": built,
        "executors": len({shard["executor"] for shard in built}),
        "shards_seconds": shards_seconds,
    }
