"""A slotted cell-switch model of the crossbar schedulers, written apart from the engine, as
the literature's switches are: N x N, one cell per input per slot with probability `load`
(Bernoulli), each to a uniformly random output, infinite input queues. It gives the numbers
docs/mechanisms.md ("Switch memory architectures") sets beside dcnsim's packet-level ones:
the saturation throughputs of FIFO inputs (Karol et al. 1987) and of one-iteration PIM, the
backlog of 1-SLIP near full load, and the non-uniform cases: hot-spot traffic on FIFO inputs
and diagonal traffic on saturated VOQs (which maximal matching iSLIP's pointers settle in).

    python3 bench/peers/crossbar_slot_model.py            # the table, a few seconds
"""

from __future__ import annotations

import random
import statistics
from collections import Counter


def islip_or_pim(voq, n, iterations, ptr, rnd, pim):
    """One slot's matching (McKeown 1999 sec. III; Anderson et al. 1993): input -> output."""
    mi = [None] * n
    mo = [None] * n
    for it in range(iterations):
        grant = [None] * n
        for o in range(n):
            if mo[o] is not None:
                continue
            req = [i for i in range(n) if mi[i] is None and voq[i][o] > 0]
            if not req:
                continue
            if pim:
                grant[o] = rnd.choice(req)
            else:
                grant[o] = min(req, key=lambda i: (i - ptr["g"][o]) % n)
        new = False
        for i in range(n):
            if mi[i] is not None:
                continue
            gs = [o for o in range(n) if grant[o] == i]
            if not gs:
                continue
            o = rnd.choice(gs) if pim else min(gs, key=lambda o: (o - ptr["a"][i]) % n)
            mi[i], mo[o], new = o, i, True
            if it == 0 and not pim:
                ptr["a"][i] = (o + 1) % n
                ptr["g"][o] = (i + 1) % n
        if not new:
            break
    return mi


def voq_run(n, load, slots, iterations=1, pim=False, seed=1):
    """Throughput and the backlog (cells) every 1,000 slots."""
    rnd = random.Random(seed)
    voq = [[0] * n for _ in range(n)]
    ptr = {"g": [0] * n, "a": [0] * n}
    sent, backlog = 0, []
    for t in range(slots):
        for i in range(n):
            if rnd.random() < load:
                voq[i][rnd.randrange(n)] += 1
        for i, o in enumerate(islip_or_pim(voq, n, iterations, ptr, rnd, pim)):
            if o is not None:
                voq[i][o] -= 1
                sent += 1
        if t % 1000 == 999:
            backlog.append(sum(map(sum, voq)))
    return sent / (n * slots), backlog


def fifo_saturated(n, slots, seed=1):
    """FIFO inputs that always hold a head, random choice among the heads that want one
    output (Karol et al. 1987): the saturation throughput."""
    rnd = random.Random(seed)
    head = [rnd.randrange(n) for _ in range(n)]
    sent = 0
    for _ in range(slots):
        want: dict[int, list[int]] = {}
        for i, o in enumerate(head):
            want.setdefault(o, []).append(i)
        for o, inputs in want.items():
            i = rnd.choice(inputs)
            head[i] = rnd.randrange(n)
            sent += 1
    return sent / (n * slots)


def islip_delay(n, load, slots, iterations, seed=1):
    """Uniform Bernoulli traffic: the mean wait of a cell in its VOQ, in slots, from the
    time-averaged backlog by Little's law (a cell that arrives in a slot may cross in it:
    a wait of 0), after the first fifth of the slots."""
    rnd = random.Random(seed)
    voq = [[0] * n for _ in range(n)]
    ptr = {"g": [0] * n, "a": [0] * n}
    held, arrived = 0, 0
    for t in range(slots):
        for i in range(n):
            if rnd.random() < load:
                voq[i][rnd.randrange(n)] += 1
                arrived += t >= slots // 5
        for i, o in enumerate(islip_or_pim(voq, n, iterations, ptr, rnd, False)):
            if o is not None:
                voq[i][o] -= 1
        held += sum(map(sum, voq)) if t >= slots // 5 else 0
    return held / arrived


def diagonal_saturated(n, slots, iterations, pim, rnd):
    """Every VOQ (i, i) and (i, i + 1) always backlogged, the pointers drawn at random:
    the throughput over the last half of the slots."""
    voq = [[0] * n for _ in range(n)]
    for i in range(n):
        voq[i][i] = voq[i][(i + 1) % n] = 1
    ptr = {"g": [rnd.randrange(n) for _ in range(n)], "a": [rnd.randrange(n) for _ in range(n)]}
    sent = 0
    for t in range(slots):
        matched = sum(o is not None for o in islip_or_pim(voq, n, iterations, ptr, rnd, pim))
        sent += matched if t >= slots // 2 else 0
    return sent / (n * (slots - slots // 2))


def fifo_hot_spot(n, load, hot, slots, seed=1):
    """FIFO inputs, Bernoulli arrivals at `load`, each cell to output 0 with probability
    `hot` and else to one of outputs 1..n-1 at random, infinite queues, random choice among
    the heads that want one output: what each output carries."""
    rnd = random.Random(seed)
    queues = [[] for _ in range(n)]
    carried = [0] * n
    dest = lambda: 0 if rnd.random() < hot else rnd.randrange(1, n)
    for _ in range(slots):
        for q in queues:
            if rnd.random() < load:
                q.append(dest())
        want: dict[int, list[int]] = {}
        for i, q in enumerate(queues):
            if q:
                want.setdefault(q[0], []).append(i)
        for o, inputs in want.items():
            queues[rnd.choice(inputs)].pop(0)
            carried[o] += 1
    return [c / slots for c in carried]


def main() -> None:
    print("FIFO inputs, saturated (Karol et al. 1987: N = 2 0.75, N = 8 0.6184)")
    for n in (2, 8):
        print(f"  N = {n}: {fifo_saturated(n, 200_000):.4f}")
    sat = 1.0  # every input offers a cell every slot
    pim1, _ = voq_run(8, sat, 20_000, pim=True)
    print(f"VOQ, PIM 1 iteration, saturated, N = 8: {pim1:.4f} (1 - (7/8)^8 = {1 - (7 / 8) ** 8:.4f})")
    print("VOQ, 1-SLIP, N = 8: carried load and backlog (cells) every 1,000 slots, two seeds")
    for load in (0.8, 0.95):
        for seed in (1, 2):
            thr, backlog = voq_run(8, load, 8_000, seed=seed)
            print(f"  load {load}: carried {thr:.4f}, backlog {backlog}")
    print("VOQ, uniform Bernoulli, N = 8: mean wait in slots (output queueing: (N - 1)/N x p / (2(1 - p)), Karol et al. 1987)")
    for load in (0.5, 0.8):
        oq = 7 / 8 * load / (2 * (1 - load))
        waits = [statistics.mean(islip_delay(8, load, 40_000, it, seed) for seed in (1, 2)) for it in (1, 4)]
        print(f"  load {load}: 1-SLIP {waits[0]:.2f}, 4-SLIP {waits[1]:.2f}, output queueing {oq:.2f}")
    got = fifo_hot_spot(8, 0.8, 0.5, 100_000)
    print("FIFO inputs, hot spot (N = 8, load 0.8, half to output 0): output 0 carries "
          f"{got[0]:.4f}, outputs 1-7 {sum(got[1:]) / 7:.4f} each (1 / (N x 0.5) x 0.5 / 7 x N = {8 * 0.25 * 0.5 / 7:.4f})")
    rnd = random.Random(1)
    print("Diagonal, every VOQ (i, i), (i, i + 1) saturated, N = 8, 200 random pointer starts:")
    pim = statistics.mean(diagonal_saturated(8, 400, 1, True, rnd) for _ in range(20))
    print(f"  PIM 1 iteration: {pim:.4f} (1 - 1/4 = 0.75)")
    for iterations in (1, 4):
        ends = Counter(round(diagonal_saturated(8, 400, iterations, False, rnd), 4) for _ in range(200))
        print(f"  iSLIP {iterations} iteration(s): " + ", ".join(f"{k} in {v}" for k, v in sorted(ends.items())))


if __name__ == "__main__":
    main()
