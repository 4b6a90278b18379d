/* SPDX-License-Identifier: MIT */
/* The RFC 2544 report directory (<txscale/session_rfc2544.h>,
 * docs/rfc2544.md "Report"): report.md and report.html (the same tables),
 * result.json (the result line), one CSV per test, and gnuplot's PNG plots.
 * Every number is printed from the result the JSON line is printed from,
 * with the digits the JSON line has (whole numbers exactly, others to 6
 * significant digits) in the CSVs and the tables (shares of the top rate
 * are given in percent there). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/proc.h"
#include <txscale/session_rfc2544.h>
#include <txscale/stats.h>

#define GNUPLOT_LIMIT_S 30.0

static const char *sz(unsigned size, char *b, size_t n)
{
	if (size == TXS_RFC2544_IMIX)
		snprintf(b, n, "imix");
	else
		snprintf(b, n, "%u", size);
	return b;
}

/* One CSV cell as the JSON line writes the number (rfc2544_write.c jnum):
 * whole numbers exactly, others with 6 significant digits */
static void num(FILE *f, double v, bool last)
{
	if (!isfinite(v))
		fputs("", f);
	else if (v == floor(v) && fabs(v) < 9e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.6g", v);
	fputc(last ? '\n' : ',', f);
}

static FILE *open_in(const char *dir, const char *name, char *path, size_t plen)
{
	snprintf(path, plen, "%s/%s", dir, name);
	return fopen(path, "w");
}

static bool has_tput(const struct txs_rfc2544_result *r)
{
	return r->tests & (TXS_RFC2544_THROUGHPUT | TXS_RFC2544_LATENCY);
}

/* ---- CSV -------------------------------------------------------------------- */

static int write_csvs(const char *dir, const struct txs_rfc2544_result *r)
{
	char path[PATH_MAX], b[16];
	FILE *f;
	if (has_tput(r)) {
		if (!(f = open_in(dir, "throughput.csv", path, sizeof(path))))
			return -errno;
		fprintf(f, "size,frame_bytes,fps,bits,top_fps,top_share,fps_min,fps_max,fps_mean,fps_stdev,runs,"
			   "latency_mean_ns,latency_min_ns,latency_p50_ns,latency_p90_ns,latency_p99_ns,latency_p99.9_ns,"
			   "latency_max_ns\n");
		for (unsigned i = 0; i < r->n_sizes; i++) {
			const struct txs_rfc2544_tput *t = &r->tput[i];
			if (!t->n_runs)
				continue;
			fprintf(f, "%s,", sz(t->size, b, sizeof(b)));
			num(f, t->frame_bytes, false);
			num(f, t->fps, false);
			num(f, t->fps * t->frame_bytes * 8, false);
			num(f, t->top_fps, false);
			num(f, t->top_fps > 0 ? t->fps / t->top_fps : NAN, false);
			num(f, t->fps_min, false);
			num(f, t->fps_max, false);
			num(f, t->fps_mean, false);
			num(f, t->fps_stdev, false);
			num(f, t->n_runs, false);
			const struct txs_rfc2544_latency *l = &t->lat;
			bool h = t->have_lat;
			num(f, h ? l->mean : NAN, false);
			num(f, h ? l->min : NAN, false);
			num(f, h ? l->p50 : NAN, false);
			num(f, h ? l->p90 : NAN, false);
			num(f, h ? l->p99 : NAN, false);
			num(f, h ? l->p999 : NAN, false);
			num(f, h ? l->max : NAN, true);
		}
		if (fclose(f))
			return -errno;
	}
	if (r->tests & TXS_RFC2544_FRAME_LOSS) {
		if (!(f = open_in(dir, "frame_loss.csv", path, sizeof(path))))
			return -errno;
		fprintf(f, "size,offered_fps,pct_of_top,sent_fps,sent,lost,loss_pct\n");
		for (unsigned i = 0; i < r->n_sizes; i++)
			for (unsigned k = 0; k < r->floss[i].n_points; k++) {
				const struct txs_rfc2544_fl_point *p = &r->floss[i].points[k];
				fprintf(f, "%s,", sz(r->floss[i].size, b, sizeof(b)));
				num(f, p->offered_fps, false);
				num(f, p->pct_of_top, false);
				num(f, p->sent_fps, false);
				num(f, (double)p->sent, false);
				num(f, (double)p->lost, false);
				num(f, p->loss_pct, true);
			}
		if (fclose(f))
			return -errno;
	}
	if (r->tests & TXS_RFC2544_BACK_TO_BACK) {
		if (!(f = open_in(dir, "back_to_back.csv", path, sizeof(path))))
			return -errno;
		fprintf(f, "size,search,frames,burst_fps,bursts,confirmed\n");
		for (unsigned i = 0; i < r->n_sizes; i++)
			for (unsigned k = 0; k < r->b2b[i].n_trials; k++) {
				const struct txs_rfc2544_b2b_trial *t = &r->b2b[i].trials[k];
				fprintf(f, "%s,%u,", sz(r->b2b[i].size, b, sizeof(b)), k + 1);
				num(f, (double)t->frames, false);
				num(f, t->burst_fps, false);
				fprintf(f, "%u,%s\n", t->steps, t->confirmed ? "true" : "false");
			}
		if (fclose(f))
			return -errno;
	}
	return 0;
}

/* ---- plots ----------------------------------------------------------------------- */

/* gnuplot -c SCRIPT in dir, bounded: 1 when it drew, 0 when it is absent or failed */
static int gnuplot(const char *dir, const char *script_path)
{
	struct txs_args a = { .n = 0 };
	txs_arg(&a, "/usr/bin/env");
	txs_arg(&a, "gnuplot");
	txs_arg(&a, script_path);
	char errp[PATH_MAX];
	snprintf(errp, sizeof(errp), "%s/.gnuplot.err", dir);
	pid_t pid = txs_spawn(&a, errp, -1);
	if (pid < 0)
		return 0;
	int st = 0;
	bool ended = txs_stop_child(pid, GNUPLOT_LIMIT_S, &st);
	unlink(errp);
	return ended && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The data files and one gnuplot script; the plots drawn, counted in *plots */
static int write_plots(const char *dir, const struct txs_rfc2544_result *r, unsigned *plots)
{
	char path[PATH_MAX], sp[PATH_MAX], b[16];
	FILE *g = open_in(dir, ".plots.gp", sp, sizeof(sp));
	if (!g)
		return -errno;
	fprintf(g, "set terminal png size 900,560\nset grid\nset datafile separator ','\nset key outside\n");
	unsigned want = 0;
	bool numeric_tput = false;
	for (unsigned i = 0; i < r->n_sizes; i++)
		numeric_tput |= r->tput[i].n_runs && r->tput[i].size != TXS_RFC2544_IMIX;
	if (has_tput(r) && numeric_tput) {
		FILE *d = open_in(dir, ".tput.dat", path, sizeof(path));
		if (!d) {
			fclose(g);
			return -errno;
		}
		for (unsigned i = 0; i < r->n_sizes; i++) {
			const struct txs_rfc2544_tput *t = &r->tput[i];
			if (t->n_runs && t->size != TXS_RFC2544_IMIX)
				fprintf(d, "%u,%.17g,%.17g,%.17g,%.17g\n", t->size, t->fps, t->fps_min, t->fps_max,
					t->top_fps > 0 ? t->fps / t->top_fps * 100 : 0);
		}
		fclose(d);
		fprintf(g,
			"set output '%s/throughput.png'\nset title 'Throughput against frame size'\n"
			"set xlabel 'frame size (bytes, FCS included)'\nset ylabel 'frames/s'\nset y2label 'share of the "
			"sender top rate (%%)'\nset y2tics\nset ytics nomirror\nset yrange [0:*]\nset y2range [0:105]\n"
			"plot '%s/.tput.dat' using 1:2:3:4 with yerrorlines title 'throughput (min..max of searches)', "
			"'' using 1:5 axes x1y2 with linespoints title 'share of top rate'\n"
			"unset y2label\nunset y2tics\nset ytics mirror\nunset y2range\n",
			dir, dir);
		want++;
	}
	if (r->tests & TXS_RFC2544_FRAME_LOSS) {
		FILE *d = open_in(dir, ".loss.dat", path, sizeof(path));
		if (!d) {
			fclose(g);
			return -errno;
		}
		unsigned blocks = 0;
		for (unsigned i = 0; i < r->n_sizes; i++) {
			if (!r->floss[i].n_points)
				continue;
			fprintf(d, "%s# %s\n", blocks++ ? "\n\n" : "", sz(r->floss[i].size, b, sizeof(b)));
			for (unsigned k = 0; k < r->floss[i].n_points; k++)
				fprintf(d, "%.17g,%.17g\n", r->floss[i].points[k].offered_fps, r->floss[i].points[k].loss_pct);
		}
		fclose(d);
		if (blocks) {
			fprintf(g,
				"set output '%s/frame_loss.png'\nset title 'Frame loss rate against offered load'\n"
				"set xlabel 'offered load (frames/s)'\nset ylabel 'loss (%%)'\nset yrange [0:*]\nplot ",
				dir);
			for (unsigned i = 0, k = 0; i < r->n_sizes; i++)
				if (r->floss[i].n_points)
					fprintf(g, "%s'%s/.loss.dat' index %u using 1:2 with linespoints title '%s bytes'",
						k ? ", " : "", dir, k, sz(r->floss[i].size, b, sizeof(b))), k++;
			fprintf(g, "\n");
			want++;
		}
	}
	bool any_lat = false;
	for (unsigned i = 0; i < r->n_sizes; i++)
		any_lat |= r->tput[i].have_lat;
	if (any_lat) {
		FILE *d = open_in(dir, ".lat.dat", path, sizeof(path));
		if (!d) {
			fclose(g);
			return -errno;
		}
		unsigned k = 0;
		for (unsigned i = 0; i < r->n_sizes; i++) {
			const struct txs_rfc2544_tput *t = &r->tput[i];
			if (!t->have_lat)
				continue;
			fprintf(d, "%u,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", k++, sz(t->size, b, sizeof(b)),
				t->lat.min / 1e3, t->lat.p50 / 1e3, t->lat.p90 / 1e3, t->lat.p99 / 1e3, t->lat.p999 / 1e3,
				t->lat.max / 1e3, t->lat.mean / 1e3);
		}
		fclose(d);
		fprintf(g,
			"set output '%s/latency.png'\nset title 'Latency at the throughput rate (percentiles, us)'\n"
			"set xlabel 'frame size (bytes)'\nset ylabel 'one-way latency (us)'\nset logscale y\n"
			"set yrange [*:*]\nset xrange [-0.5:%u.5]\n"
			"plot '%s/.lat.dat' using 1:4:3:8:7:xticlabels(2) with candlesticks title "
			"'min, p50, p99.9, max', '' using 1:5 with points pt 7 title 'p90', '' using 1:6 with points pt 5 "
			"title 'p99', '' using 1:9 with points pt 2 title 'mean'\nunset logscale y\n",
			dir, k - 1, dir);
		want++;
	}
	fclose(g);
	*plots = want && gnuplot(dir, sp) ? want : 0;
	unlink(sp);
	for (const char *const *n = (const char *const[]){ ".tput.dat", ".loss.dat", ".lat.dat", NULL }; *n; n++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *n);
		unlink(path);
	}
	return 0;
}

/* ---- markdown and HTML: one table model, two renderings ------------------------------------ */

struct table {
	FILE *f;
	bool html;
	unsigned cols;
};

static void t_begin(struct table *t, const char *title, const char *const *head, unsigned n)
{
	t->cols = n;
	if (t->html) {
		fprintf(t->f, "<h2>%s</h2>\n<table>\n<tr>", title);
		for (unsigned i = 0; i < n; i++)
			fprintf(t->f, "<th>%s</th>", head[i]);
		fprintf(t->f, "</tr>\n");
		return;
	}
	fprintf(t->f, "\n## %s\n\n|", title);
	for (unsigned i = 0; i < n; i++)
		fprintf(t->f, " %s |", head[i]);
	fprintf(t->f, "\n|");
	for (unsigned i = 0; i < n; i++)
		fprintf(t->f, "---:|");
	fprintf(t->f, "\n");
}

static void t_row(struct table *t, char cells[][48])
{
	fprintf(t->f, t->html ? "<tr>" : "|");
	for (unsigned i = 0; i < t->cols; i++)
		fprintf(t->f, t->html ? "<td>%s</td>" : " %s |", cells[i]);
	fprintf(t->f, t->html ? "</tr>\n" : "\n");
}

static void t_end(struct table *t)
{
	if (t->html)
		fprintf(t->f, "</table>\n");
}

static void para(FILE *f, bool html, const char *text)
{
	fprintf(f, html ? "<p>%s</p>\n" : "\n%s\n", text);
}

static void image(FILE *f, bool html, const char *file, const char *alt)
{
	if (html)
		fprintf(f, "<p><img src=\"%s\" alt=\"%s\"></p>\n", file, alt);
	else
		fprintf(f, "\n![%s](%s)\n", alt, file);
}

#define CELL(i, ...) snprintf(c[i], sizeof(c[i]), __VA_ARGS__)
/* a number of the JSON line, written as it writes it (num) */
#define NUM(i, v) fmt_num(c[i], sizeof(c[i]), (v))

static void fmt_num(char *out, size_t n, double v)
{
	if (!isfinite(v))
		snprintf(out, n, "-");
	else if (v == floor(v) && fabs(v) < 9e15)
		snprintf(out, n, "%.0f", v);
	else
		snprintf(out, n, "%.6g", v);
}

static void document(FILE *f, bool html, const struct txs_rfc2544_result *r, const struct txs_rfc2544_conf *cf,
		     unsigned plots)
{
	const struct txs_rfc2544_conf *conf = cf;
	char c[12][48], b[16], line[1024];
	struct table t = { .f = f, .html = html };
	if (html)
		fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>RFC 2544 report</title>\n"
			   "<style>body{font-family:sans-serif;max-width:1000px;margin:auto}table{border-collapse:"
			   "collapse}td,th{border:1px solid #999;padding:2px 8px;text-align:right}</style></head><body>\n"
			   "<h1>RFC 2544 report: txscale rfc2544</h1>\n");
	else
		fprintf(f, "# RFC 2544 report: txscale rfc2544\n");
	snprintf(line, sizeof(line),
		 "Device under test: the path to %s (%s) port %u. Sender: txscale send --dev %s%s%s%s; receiver: %s%s%s. "
		 "Trials of %g s (%g s while searching), loss tolerance %g %%, search precision %g %%, %u searches "
		 "per size, %u latency trials, %u back-to-back searches. %u trials in %.1f s%s. Frame sizes include "
		 "the 4-byte FCS; the sender's top rate stands in for the line rate.",
		 conf->dest, r->family == AF_INET6 ? "IPv6" : "IPv4", conf->port, conf->dev, conf->send_netns ? " in netns " : "",
		 conf->send_netns ? conf->send_netns : "", conf->threads ? " (threads given)" : "",
		 conf->remote ? "a txscale server" : "txscale recv --dev ", conf->remote ? "" : conf->recv_dev,
		 conf->recv_netns ? " (in its own netns)" : "", conf->trial_s, conf->search_s, conf->loss_pct, conf->precision * 100,
		 conf->repeat, conf->latency_trials, conf->b2b_trials, r->trials, r->seconds,
		 r->complete ? "" : " (INCOMPLETE: a trial failed or the run was stopped)");
	para(f, html, line);
	if (has_tput(r)) {
		static const char *const h[] = { "size", "fps", "bits/s", "% of top", "top fps", "min", "max", "stdev",
						 "searches" };
		t_begin(&t, "Throughput", h, 9);
		for (unsigned i = 0; i < r->n_sizes; i++) {
			const struct txs_rfc2544_tput *p = &r->tput[i];
			if (!p->n_runs)
				continue;
			CELL(0, "%s", sz(p->size, b, sizeof(b)));
			NUM(1, p->fps);
			NUM(2, p->fps * p->frame_bytes * 8);
			CELL(3, "%.1f", p->top_fps > 0 ? p->fps / p->top_fps * 100 : 0);
			NUM(4, p->top_fps);
			NUM(5, p->fps_min);
			NUM(6, p->fps_max);
			NUM(7, p->fps_stdev);
			CELL(8, "%u", p->n_runs);
			t_row(&t, c);
		}
		t_end(&t);
		if (plots)
			image(f, html, "throughput.png", "throughput against frame size");
	}
	if (r->tests & TXS_RFC2544_LATENCY) {
		static const char *const h[] = { "size", "rate fps", "trials", "mean ns", "min ns", "p50 ns", "p90 ns",
						 "p99 ns", "p99.9 ns", "max ns" };
		t_begin(&t, "Latency at the throughput rate", h, 10);
		for (unsigned i = 0; i < r->n_sizes; i++) {
			const struct txs_rfc2544_tput *p = &r->tput[i];
			if (!p->have_lat)
				continue;
			CELL(0, "%s", sz(p->size, b, sizeof(b)));
			NUM(1, p->fps);
			CELL(2, "%u", p->n_lat);
			NUM(3, p->lat.mean);
			NUM(4, p->lat.min);
			NUM(5, p->lat.p50);
			NUM(6, p->lat.p90);
			NUM(7, p->lat.p99);
			NUM(8, p->lat.p999);
			NUM(9, p->lat.max);
			t_row(&t, c);
		}
		t_end(&t);
		if (plots)
			image(f, html, "latency.png", "latency distribution at the throughput rate");
	}
	if (r->tests & TXS_RFC2544_FRAME_LOSS) {
		static const char *const h[] = { "size", "% of top", "offered fps", "sent fps", "sent", "lost", "loss %" };
		t_begin(&t, "Frame loss rate", h, 7);
		for (unsigned i = 0; i < r->n_sizes; i++)
			for (unsigned k = 0; k < r->floss[i].n_points; k++) {
				const struct txs_rfc2544_fl_point *p = &r->floss[i].points[k];
				CELL(0, "%s", sz(r->floss[i].size, b, sizeof(b)));
				NUM(1, p->pct_of_top);
				NUM(2, p->offered_fps);
				NUM(3, p->sent_fps);
				CELL(4, "%llu", (unsigned long long)p->sent);
				CELL(5, "%llu", (unsigned long long)p->lost);
				NUM(6, p->loss_pct);
				t_row(&t, c);
			}
		t_end(&t);
		if (plots)
			image(f, html, "frame_loss.png", "loss against offered load");
	}
	if (r->tests & TXS_RFC2544_BACK_TO_BACK) {
		static const char *const h[] = { "size", "frames (mean)", "min", "max", "burst fps", "buffer s",
						 "searches" };
		t_begin(&t, "Back-to-back frames", h, 7);
		for (unsigned i = 0; i < r->n_sizes; i++) {
			const struct txs_rfc2544_b2b *p = &r->b2b[i];
			if (!p->n_trials)
				continue;
			CELL(0, "%s", sz(p->size, b, sizeof(b)));
			NUM(1, p->frames);
			NUM(2, p->frames_min);
			NUM(3, p->frames_max);
			NUM(4, p->burst_fps);
			NUM(5, p->buffer_s);
			CELL(6, "%u", p->n_trials);
			t_row(&t, c);
		}
		t_end(&t);
	}
	if (html)
		fprintf(f, "</body></html>\n");
}

int txs_rfc2544_report(const char *dir, const struct txs_rfc2544_result *r, const struct txs_rfc2544_conf *c,
		       unsigned *plots, char *err, size_t errlen)
{
	char path[PATH_MAX];
	*plots = 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		int e = errno;
		snprintf(err, errlen, "cannot make the report directory '%s': %s", dir, strerror(e));
		return -e;
	}
	int rc = write_csvs(dir, r);
	if (rc == 0)
		rc = write_plots(dir, r, plots);
	static const char *const names[] = { "report.md", "report.html", "result.json" };
	for (unsigned i = 0; rc == 0 && i < 3; i++) {
		FILE *f = open_in(dir, names[i], path, sizeof(path));
		if (!f) {
			rc = -errno;
			break;
		}
		if (i < 2)
			document(f, i == 1, r, c, *plots);
		else
			txs_rfc2544_write_result(f, true, r, c);
		if (fclose(f))
			rc = -errno;
	}
	if (rc < 0)
		snprintf(err, errlen, "cannot write the report in '%s': %s", dir, strerror(-rc));
	return rc;
}
