/* SPDX-License-Identifier: MIT */
/* Private to lib/engine/engine.c, included once per instance of the worker
 * loop: define WL_NAME (the function) and WL_PROF (0: plain, 1: profiled)
 * first. No include guard, on purpose. */
static int WL_NAME(struct txs_wk *w)
{
	struct txs_engine *e = w->eng;
	const struct txs_engine_conf *c = &e->conf;
	struct txs_pktbuf bufs[TXS_MAX_BURST];
	/* one clock for all workers: the run's start (set before the go signal) */
	uint64_t t0 = e->t_start;
	uint64_t deadline = c->duration > 0 ? t0 + (uint64_t)(c->duration * 1e9) : UINT64_MAX;
	/* the worker's schedule (rate profiles: engine.c, struct pacer) */
	struct pacer pc;
	pacer_init(&pc, c, w->pub.id, w->rate_pps, t0);
	uint64_t done = 0; /* datagrams built (sent or dropped) */
	struct txs_txq *q = w->pub.txq;
	int rc = 0;
	/* a datagram is fpd frames (IP fragments); fill() needs min_frames
	 * buffers for a whole datagram or GSO call (min_dg datagrams) */
	const unsigned fpd = w->pub.frames_per_dgram, min_dg = w->pub.min_frames / fpd;
	unsigned no_room = 0;
	/* profile: countdown to the next sampled burst (the first one is) */
	struct txs_prof *pf = &w->pub.prof;
	struct txs_prof_run *pr = &w->run;
	unsigned cd = 1;
	if (pc.bon && min_dg > 1 && pc.bon % min_dg)
		return -EINVAL; /* a group must hold whole GSO calls */
	const uint64_t slack = pc.on ? pace_window(c, &pc) : 0;
	if (slack)
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* wake at the deadline, not up to 50 us after it */
	/* SO_TXTIME (the device's qdisc holds each datagram until its time):
	 * hand the datagrams due within TXS_PACE_TXTIME_AHEAD_NS over early,
	 * each window's worth with the time its last one is due, and sleep
	 * half that between (engine.h, pace_slack_ns) */
	const uint64_t ahead = slack && q->dev->txtime_clock >= 0 && min_dg == 1 && !pc.bon &&
					       (pc.kind == TXS_PACE_CONST || pc.kind == TXS_PACE_RAMP)
				       ? TXS_PACE_TXTIME_AHEAD_NS
				       : 0;
	/* the sleeping pacer on a schedule whose due times it can ask ahead
	 * (CONST without bursts, RAMP): what is due leaves with its window */
	const bool gather = slack && !ahead && min_dg == 1 && !pc.bon &&
			    (pc.kind == TXS_PACE_CONST || pc.kind == TXS_PACE_RAMP);

	while (done < w->quota && !stopping(e)) {
		const bool sample = WL_PROF && cd == 1;
		uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, now_ns = 0;
		int64_t cyc0[TXS_PROF_STAGES]; /* to undo a preempted sample */
		uint64_t stamps0 = 0;
		if (sample) {
			memcpy(cyc0, pf->cyc, sizeof(cyc0));
			stamps0 = pf->stamps;
			s0 = txs_prof_stamp();
		}
		uint64_t mono = txs_now_mono_ns();
		if (mono >= deadline) {
			/* a paced run still sends what fell due before its
			 * deadline (a wake-up late past it), and nothing after;
			 * not for long: a worker still behind TXS_PACE_LATE_MAX_NS
			 * (1 s) past it
			 * could not keep up with its rate, and leaves what was
			 * due unsent (counted) rather than run on */
			if (!pc.on)
				break;
			const bool late = mono - deadline >= TXS_PACE_LATE_MAX_NS;
			mono = deadline - 1;
			struct pacer t = pc;
			uint64_t due = pacer_allowed(&t, mono, done, late ? w->quota : done + 1);
			if (due > w->quota)
				due = w->quota;
			if (due <= done)
				break;
			if (late) {
				w->due_unsent = due - done;
				break;
			}
		}
		unsigned want = c->burst;
		uint64_t left = w->quota - done;
		if (left < want)
			want = (unsigned)left;
		if (pc.on) {
			/* datagrams allowed by now (the schedule); wait until a
			 * whole unit (datagram, GSO call) is due */
			/* (never a datagram due at or after the deadline: the
			 * spin-exact schedule sends none either) */
			uint64_t horizon = mono + ahead < deadline ? mono + ahead : deadline - 1;
			uint64_t allowed = pacer_allowed(&pc, horizon, done, done + want);
			uint64_t need = TXS_UNLIKELY(min_dg > 1) ? (left < min_dg ? left : min_dg) : 1;
			if (allowed < done + need) {
				uint64_t next = pacer_due(&pc, done + need - 1);
				if (next == UINT64_MAX && deadline == UINT64_MAX)
					break; /* the schedule has no more datagrams (a ramp to 0) and no duration */
				if (ahead) {
					next = next > ahead / 2 ? next - ahead / 2 : 0;
					pace_sleep(e, next < deadline ? next : deadline);
				} else if (slack) {
					next = pacer_wake(&pc, done, need, want, next, slack, deadline);
					pace_sleep(e, next < deadline ? next : deadline);
				} else {
					pace_until(e, next < deadline ? next : deadline);
				}
				continue;
			}
			if (gather && allowed - done < want) {
				/* fewer than a burst due: they leave with the rest of
				 * the window of the first of them (a worker that is
				 * just in time at a high rate would otherwise send a
				 * few per call, as fast as it can make calls) */
				uint64_t wake = pacer_wake(&pc, done, need, want, pacer_due(&pc, done), slack, deadline);
				if (wake > mono) {
					pace_sleep(e, wake < deadline ? wake : deadline);
					continue;
				}
			}
			if (allowed - done < want)
				want = (unsigned)(allowed - done);
			if (ahead) {
				/* the datagrams due within the window of the first */
				uint64_t first = pacer_due(&pc, done);
				unsigned k = 1;
				while (k < want && pacer_due(&pc, done + k) <= first + slack)
					k++;
				want = k;
				q->txtime_ns = pacer_due(&pc, done + k - 1);
			}
		}
		if (TXS_UNLIKELY(fpd > 1))
			want = want * fpd < c->burst ? want * fpd : c->burst;
		if (TXS_UNLIKELY(min_dg > 1))
			w->pub.left = left; /* a GSO call may need to end early */
		if (sample) {
			now_ns = txs_now_real_ns() + (uint64_t)c->stamp_shift_ns; /* before the device stage, not inside it */
			s1 = txs_prof_stamp();
		}
		unsigned n = txs_txq_alloc(q, bufs, want);
		if (sample)
			s2 = txs_prof_stamp();
		if (n == 0) {
			/* ring full: let completions happen; a device that failed for good ends the worker */
			rc = txs_txq_flush(q);
			if (rc < 0)
				break;
			continue;
		}
		unsigned filled;
		if (sample) {
			if (w->pub.ts_packet)
				filled = fill_stamped(w, c->gen, bufs, n);
			else
				filled = c->gen->fill_prof ? c->gen->fill_prof(&w->pub, bufs, n, now_ns)
							   : c->gen->fill(&w->pub, bufs, n, now_ns);
			s3 = txs_prof_stamp();
		} else if (TXS_UNLIKELY(w->pub.ts_packet)) {
			filled = fill_stamped(w, c->gen, bufs, n);
		} else {
			filled = c->gen->fill(&w->pub, bufs, n, txs_now_real_ns() + (uint64_t)c->stamp_shift_ns);
		}
		if (filled < n)
			txs_txq_release(q, bufs + filled, n - filled);
		if (TXS_UNLIKELY(filled == 0) && !w->pub.fill_err && n < w->pub.min_frames && ++no_room < (1u << 20)) {
			/* no room for a whole datagram: let the device drain, never cut it */
			rc = txs_txq_flush(q);
			if (rc < 0)
				break;
			continue;
		}
		no_room = 0;
		if (filled == 0) {
			TXS_STAT_ADD(w->stats.errors, 1);
			rc = w->pub.fill_err ? w->pub.fill_err : -EIO;
			break;
		}
		unsigned sent = 0, tries = 0;
		for (;;) {
			sent += txs_txq_send(q, bufs + sent, filled - sent);
			if (sent == filled || ++tries > c->retries)
				break;
			txs_txq_flush(q);
		}
		if (sample)
			s4 = txs_prof_stamp();
		uint64_t pk = 0, by = 0, dr = 0;
		for (unsigned i = 0; i < sent; i++) {
			pk += bufs[i].segs;
			by += bufs[i].len;
		}
		for (unsigned i = sent; i < filled; i++)
			dr += bufs[i].segs;
		const uint64_t frames = pk;
		if (TXS_UNLIKELY(fpd > 1)) {
			/* datagrams: a datagram whose last frame was refused is dropped
			 * whole (its first fragments reached the wire as frames) */
			uint64_t all = (pk + dr) / fpd;
			pk /= fpd;
			dr = all - pk;
		}
		if (sent < filled) {
			uint64_t r0 = sample ? txs_prof_stamp() : 0;
			txs_txq_release(q, bufs + sent, filled - sent);
			if (sample) {
				pf->cyc[TXS_PROF_DEVICE] += (int64_t)(txs_prof_stamp() - r0) - (int64_t)pf->stamp_cost;
				pf->stamps += 2;
			}
		}
		TXS_STAT_ADD(w->stats.packets, pk);
		TXS_STAT_ADD(w->stats.frames, frames);
		TXS_STAT_ADD(w->stats.bytes, by);
		if (dr)
			TXS_STAT_ADD(w->stats.drops, dr);
		TXS_STAT_ADD(w->stats.bursts, 1);
		done += pk + dr;
		if (WL_PROF) {
			if (sample) {
				uint64_t s5 = txs_prof_stamp();
				int64_t cost = (int64_t)pf->stamp_cost;
				cd = c->profile_every;
				if (prof_preempted(pr, s5 - s0)) {
					memcpy(pf->cyc, cyc0, sizeof(cyc0));
					pf->stamps = stamps0;
					pr->discarded++;
					continue;
				}
				pr->samples++;
				pr->pkts += pk + dr;
				pf->stamps += 6; /* s0..s5 */
				pr->loop += s5 - s0;
				/* device: alloc, and send with its retries (refused frames' release above) */
				pf->cyc[TXS_PROF_DEVICE] += (int64_t)(s2 - s1) + (int64_t)(s4 - s3) - 2 * cost;
				if (!c->gen->fill_prof || w->pub.ts_packet)
					pf->cyc[TXS_PROF_HEADER] += (int64_t)(s3 - s2) - cost;
			} else {
				cd--;
			}
		}
	}
	txs_txq_flush(q);
	return rc;
}

#undef WL_NAME
#undef WL_PROF
