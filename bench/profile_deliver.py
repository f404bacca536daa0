"""The `deliver` target's CPU per delivery, and where it goes (docs/benchmark.md, "deliver's
CPU (issue 34)"):

    python -m bench.profile_deliver --messages 500 [--rounds 2] [--tls] [--top 25]

Starts the Firestore emulator and the Slack stand-in (bench.runs.started), seeds `--messages`
due one-offs over as many channels (`--channels` for fewer), builds the message the tick
publishes for each (processor.publish.message_for, whatever format it writes) and POSTs its
push body through functions-framework's own app for main.py's `deliver`, `--threads` at a
time in this process (one function instance), as bench.pubsub_roles hands a pulled message
to it (the admin token as the push relay adds it). Unlike the bench's `deliver` processes,
the product builds its own runtime (core.runtime.runtime_for), as a function instance does,
so its per-request set-up is measured too. `--tls` puts the stand-in behind a TLS front, as
Slack is reached in production; `--via-pubsub` goes through the Pub/Sub emulator and the
bench's own pull subscriber instead of direct POSTs.

Each round seeds a fresh project; its first `--warm-up` deliveries are not measured (the
imports, the first gRPC channel, the emulator's JIT). It prints, per round, the process CPU
per measured delivery (`time.process_time`: every thread of this process, gRPC's included),
the wall time and the load average; then a cProfile of the last round's measured
deliveries (one per thread, on the thread's CPU clock, merged): the top `--top` entries by
cumulative and by own time. `--json FILE` writes the figures, `--save FILE` the profile.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import cProfile
import io
import json
import os
import pstats
import shutil
import socket
import socketserver
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import seeding
from bench.runs import Bench, new_project, started
from bench.services import ROOT, free_port
from emulator.pubsub import create_subscription, create_topic
from processor.kind_pass import PARALLEL_POSTS

TOKEN = "profile-admin-token"  # noqa: S105 (the bench's own, for a local emulator)
SUBSCRIPTION = "projects/{project}/subscriptions/deliver"


def tls_front(listen: int, target: int, cert: str, key: str) -> None:
    """Serve TLS on 127.0.0.1:`listen`, each connection piped to the plain HTTP stand-in on
    `target`: Slack as production reaches it, over HTTPS (the stand-in speaks HTTP only).
    Runs in a process of its own (`--tls-front`), so its CPU is not the profiled process's."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    class Pipe(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            try:
                tls = context.wrap_socket(self.request, server_side=True)
            except OSError:  # a connection that never shook hands (the readiness probe)
                return
            with tls, socket.create_connection(("127.0.0.1", target)) as plain:
                back = threading.Thread(target=_pump, args=(plain, tls), daemon=True)
                back.start()
                _pump(tls, plain)
                back.join()

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 256

    with Server(("127.0.0.1", listen), Pipe) as server:
        server.serve_forever()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Bytes from `source` to `sink` until `source` ends; then `sink`'s sending side ends."""
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


@contextlib.contextmanager
def over_tls(bench: Bench) -> Iterator[dict[str, str]]:
    """The stand-in behind a TLS front (a process of its own), and the settings that reach
    it: SLACK_API_URL, and SSL_CERT_FILE naming the system's CA bundle with the front's CA
    added (a CA bundle as large as production's, loaded wherever a context is built)."""
    from emulator.teams_tls import make_certificates

    certificates = make_certificates()
    bundle = certificates.directory / "bundle.pem"
    system = Path(ssl.get_default_verify_paths().cafile or "")
    system_pem = system.read_bytes() if system.is_file() else b""
    bundle.write_bytes(system_pem + certificates.ca_path.read_bytes())
    port = free_port()
    target = str(bench.standin.port)
    front = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.profile_deliver",
            "--tls-front",
            str(port),
            target,
            str(certificates.cert_path),
            str(certificates.key_path),
        ],
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("the TLS front did not start")
            time.sleep(0.05)
        yield {"SLACK_API_URL": f"https://127.0.0.1:{port}/api/", "SSL_CERT_FILE": str(bundle)}
    finally:
        front.terminate()
        front.wait(timeout=10)
        shutil.rmtree(certificates.directory, ignore_errors=True)


def push_bodies(project: str) -> list[tuple[str, Any]]:
    """The push body (JSON) of each seeded document's message, as the tick publishes it and
    a push subscription POSTs it, beside the message itself (core.pubsub.DueOccurrence)."""
    from core.store import MESSAGES, make_client
    from messages.kind import MESSAGE_KIND
    from processor.publish import message_for

    db = make_client(project)
    bodies = []
    for n, snap in enumerate(db.collection(MESSAGES).stream()):
        occurrence = message_for(MESSAGE_KIND, snap)
        if occurrence is None:
            continue
        message = {
            "data": base64.b64encode(occurrence.data()).decode(),
            "messageId": f"profile-{n}",
            "attributes": occurrence.attributes(),
            "orderingKey": occurrence.channel,
            "publishTime": datetime.now(UTC).isoformat(),
        }
        body = {"subscription": SUBSCRIPTION.format(project=project), "message": message}
        bodies.append((json.dumps(body), occurrence))
    db.close()  # type: ignore[no-untyped-call]
    return bodies


def one_round(
    bench: Bench, env: dict[str, str], args: argparse.Namespace, profiled: bool
) -> tuple[dict[str, Any], list[cProfile.Profile]]:
    """Seed a fresh project and push every message through `deliver`, `args.threads` at a
    time: the figures of the measured part (all but the first `args.warm_up`), and, when
    `profiled`, each thread's profile of it (direct POSTs only)."""
    import functions_framework

    from core.runtime import runtime_for
    from core.store import make_client

    project = new_project("profile")
    os.environ.update(env | {"GOOGLE_CLOUD_PROJECT": project})
    runtime_for.cache_clear()  # a new project: a new instance, as a fresh deploy starts one
    db = make_client(project)
    due = datetime.now(UTC) - timedelta(seconds=5)
    count = args.warm_up + args.messages
    seeding.seed(db, "profile", count, args.channels or count, due)
    db.close()  # type: ignore[no-untyped-call]
    bodies = push_bodies(project)
    app = functions_framework.create_app(  # type: ignore[no-untyped-call]
        target="deliver", source=str(ROOT / "main.py"), signature_type="cloudevent"
    )
    headers = {"Authorization": f"Bearer {TOKEN}"}
    statuses: Counter[str] = Counter()
    lock = threading.Lock()

    def serve(share: list[tuple[str, Any]], profile: cProfile.Profile | None) -> None:
        client = app.test_client()
        if profile is not None:
            profile.enable()
        for body, _ in share:
            answer = client.post("/", data=body, headers=headers, content_type="application/json")
            status = (answer.get_json(silent=True) or {}).get("status")
            with lock:
                statuses[f"{answer.status_code} {status}"] += 1
        if profile is not None:
            profile.disable()

    def run(part: list[tuple[str, Any]], profile: bool) -> list[cProfile.Profile]:
        # Each thread its own profiler (cProfile sees only the thread that enabled it),
        # timed by the thread's CPU clock: what waits (Slack, Firestore, the channel's
        # pacing hold) costs nothing in it.
        shares = [part[i :: args.threads] for i in range(args.threads)]
        profiles = [cProfile.Profile(time.thread_time) if profile else None for _ in shares]
        with ThreadPoolExecutor(max_workers=args.threads) as pool:
            list(pool.map(serve, shares, profiles))
        return [p for p in profiles if p is not None]

    # The product's log lines go to stdout: written, as in a function, but not kept.
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        run(bodies[: args.warm_up], False)
        if args.via_pubsub:
            return via_pubsub(bench, project, bodies[args.warm_up :], args), []
        statuses.clear()
        cpu, wall = time.process_time(), time.perf_counter()
        profiles = run(bodies[args.warm_up :], profiled)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if set(statuses) != {"200 handled"}:
        raise SystemExit(f"not every delivery was handled: {dict(statuses)}")
    return figures("direct", args.messages, args.threads, cpu, wall, profiled), profiles


def via_pubsub(
    bench: Bench, project: str, bodies: list[tuple[str, Any]], args: argparse.Namespace
) -> dict[str, Any]:
    """The bench's own path (bench.pubsub_roles.run_deliver): the messages published to the
    Pub/Sub emulator, then pulled by a streaming-pull subscriber in this process that POSTs
    each push body through the same app; measured from the subscriber's start until the
    stand-in has every post."""
    from google.cloud.pubsub_v1 import PublisherClient
    from google.cloud.pubsub_v1.types import PublisherOptions

    from bench.pubsub_roles import run_deliver
    from bench.rpc import RpcCounter
    from bench.worker import build_runtime
    from core.runtime import runtime_for
    from core.settings import Settings

    topic = f"projects/{project}/topics/due-occurrences"
    subscription = SUBSCRIPTION.format(project=project)
    create_topic(topic)
    create_subscription(topic, subscription)
    publisher = PublisherClient(publisher_options=PublisherOptions(enable_message_ordering=True))
    futures = [
        publisher.publish(topic, o.data(), ordering_key=o.channel, **o.attributes())
        for _, o in bodies
    ]
    for future in futures:
        future.result(timeout=60)
    publisher.stop()
    posted = len(bench.standin.posts())
    rt = build_runtime(RpcCounter()) if args.counted else runtime_for(Settings.from_env())
    with tempfile.TemporaryDirectory() as tmp:
        stop = f"{tmp}/stop"
        cpu, wall = time.process_time(), time.perf_counter()
        with ThreadPoolExecutor(max_workers=1) as pool:
            done = pool.submit(
                run_deliver,
                rt,
                time.time() + 600,
                subscription=subscription,
                stop=stop,
                threads=args.threads,
                token=TOKEN,
            )
            while len(bench.standin.posts()) < posted + len(bodies) and not done.done():
                time.sleep(0.5)
            Path(stop).touch()
            counts = done.result()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    counts.pop("ended_at", None)
    return figures("via_pubsub", len(bodies), args.threads, cpu, wall, False) | {"acks": counts}


def figures(
    how: str, deliveries: int, threads: int, cpu: float, wall: float, profiled: bool
) -> dict[str, Any]:
    return {
        "how": how,
        "deliveries": deliveries,
        "threads": threads,
        "cpu_ms_per_delivery": round(1000 * cpu / deliveries, 2),
        "wall_seconds": round(wall, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "profiled": profiled,
    }


def top_entries(profiles: list[cProfile.Profile], sort: str, count: int) -> str:
    out = io.StringIO()
    stats = pstats.Stats(*profiles, stream=out)
    stats.strip_dirs().sort_stats(sort).print_stats(count)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_deliver", description=__doc__)
    parser.add_argument("--messages", type=int, default=500, help="measured deliveries per round")
    parser.add_argument("--warm-up", type=int, default=50, help="deliveries first, unmeasured")
    parser.add_argument("--rounds", type=int, default=2, help="rounds; the last one is profiled")
    parser.add_argument(
        "--threads", type=int, default=PARALLEL_POSTS, help="deliveries at once (one instance)"
    )
    parser.add_argument(
        "--tls", action="store_true", help="reach the stand-in over HTTPS, as Slack is reached"
    )
    parser.add_argument("--tls-front", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument(
        "--counted",
        action="store_true",
        help="with --via-pubsub: the bench's runtime (RPCs counted), not the product's",
    )
    parser.add_argument(
        "--channels", type=int, help="channels the messages go to (default: one each)"
    )
    parser.add_argument("--no-profile", dest="profile", action="store_false")
    parser.add_argument(
        "--via-pubsub",
        action="store_true",
        help="publish to the Pub/Sub emulator and pull as the bench does (not profiled)",
    )
    parser.add_argument("--latency-ms", type=float, default=0.0, help="the stand-in's latency")
    parser.add_argument("--top", type=int, default=25, help="profile entries shown per order")
    parser.add_argument("--json", type=Path, help="write the figures to this file too")
    parser.add_argument("--save", type=Path, help="write the merged profile (pstats) here")
    args = parser.parse_args()
    if args.tls_front:
        listen, target, cert, key = args.tls_front
        tls_front(int(listen), int(target), cert, key)
        return
    env = {
        "SLACK_BOT_TOKEN": "xoxb-profile",
        "APP_ENV": "development",
        "DISPATCH": "pubsub",
        "ADMIN_TOKEN": TOKEN,
        "PUBSUB_TOPIC": "due-occurrences",  # required by DISPATCH=pubsub; nothing is published
    }
    rounds = []
    profiles: list[cProfile.Profile] = []
    with started(args.latency_ms, pubsub=args.via_pubsub) as bench, contextlib.ExitStack() as tls:
        env |= {"FIRESTORE_EMULATOR_HOST": bench.firestore_host, "SLACK_API_URL": bench.standin.url}
        if args.tls:
            env |= tls.enter_context(over_tls(bench))
        for n in range(args.rounds):
            last = n == args.rounds - 1
            figures, profiles = one_round(bench, env, args, profiled=last and args.profile)
            rounds.append(figures)
            print(json.dumps({"round": n + 1, **figures}), flush=True)
    for sort in ("cumulative", "tottime") if profiles else ():
        print(f"\n=== the last round's measured deliveries, top {args.top} by {sort} ===")
        print(top_entries(profiles, sort, args.top))
    if args.save is not None and profiles:
        pstats.Stats(*profiles).dump_stats(args.save)
    if args.json is not None:
        args.json.write_text(json.dumps({"rounds": rounds}, indent=2))


if __name__ == "__main__":
    main()
