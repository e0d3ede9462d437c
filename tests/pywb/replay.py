"""Replays captures through pywb in `id_` mode from two collections and
compares the answers: the same status and the same payload bytes.

    python replay.py ROOT CAPTURES COLLECTION REFERENCE [--workers N]

ROOT holds pywb's `collections/` folder; CAPTURES has one capture a line,
`URL<TAB>14-digit time`. Each capture is fetched from COLLECTION (the
deduplicated files) and from REFERENCE (the original files, indexed by pywb's
own indexer): pywb joins a chunked transfer's chunks and serves a URL's
capture rather than its redirect to itself, in both. pywb's front end runs in
this process (its WSGI application, called directly, not through a socket),
the captures split over N processes (default: the machine's cores). Prints
one JSON object: captures, differing (how many, and the first 20 URLs), and
how many COLLECTION answered 200.
"""

import hashlib
import io
import json
import logging
import os
import subprocess
import sys
import tempfile


def fetch(app, path):
    """pywb's answer to GET `path`: its status code and the body's SHA-1."""
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SCRIPT_NAME": "",
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "localhost",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    statuses = []
    body = app(environ, lambda status, headers, exc_info=None: statuses.append(status))
    try:
        digest = hashlib.sha1()
        for chunk in body:
            digest.update(chunk)
    finally:
        if hasattr(body, "close"):
            body.close()
    return int(statuses[0].split(" ", 1)[0]), digest.hexdigest()


def replay_part(root, captures, collection, reference, part, parts):
    """Replays every `parts`-th capture from `part` on."""
    logging.disable(logging.CRITICAL)
    os.chdir(root)
    from pywb.apps.frontendapp import FrontEndApp

    app = FrontEndApp()
    total, ok, differing = 0, 0, []
    with open(captures, encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number % parts != part or not line.strip():
                continue
            url, time = line.rstrip("\n").split("\t")
            total += 1
            answer = fetch(app, f"/{collection}/{time}id_/{url}")
            ok += answer[0] == 200
            if answer != fetch(app, f"/{reference}/{time}id_/{url}"):
                differing.append(url)
    return {"captures": total, "ok": ok, "differing": differing}


def main(arguments):
    workers = os.cpu_count() or 1
    if "--workers" in arguments:
        at = arguments.index("--workers")
        workers = max(1, int(arguments[at + 1]))
        del arguments[at : at + 2]
    if "--part" in arguments:
        at = arguments.index("--part")
        part, parts = (int(n) for n in arguments[at + 1].split("/"))
        del arguments[at : at + 2]
        # pywb prints what it loads: the answer alone goes to stdout.
        answer_out = sys.stdout
        sys.stdout = sys.stderr
        answer_out.write(json.dumps(replay_part(*arguments, part, parts)) + "\n")
        return
    root, captures, collection, reference = arguments
    # Each process's log (pywb's and gevent's, a line a request) to a file,
    # its end shown when the process fails.
    logs = [tempfile.TemporaryFile() for _ in range(workers)]
    children = [
        subprocess.Popen(
            [sys.executable, __file__, root, captures, collection, reference,
             "--part", f"{part}/{workers}"],
            stdout=subprocess.PIPE,
            stderr=log,
        )
        for part, log in enumerate(logs)
    ]
    total, ok, differing = 0, 0, []
    for child, log in zip(children, logs):
        out, _ = child.communicate()
        if child.returncode != 0:
            log.seek(0)
            tail = log.read().decode("utf-8", "replace")[-3000:]
            sys.exit(f"a replay process failed (exit status {child.returncode}):\n{tail}")
        answer = json.loads(out)
        total += answer["captures"]
        ok += answer["ok"]
        differing += answer["differing"]
    print(json.dumps({
        "captures": total,
        "ok": ok,
        "differing": len(differing),
        "first_differing": sorted(differing)[:20],
    }))


if __name__ == "__main__":
    main(sys.argv[1:])
