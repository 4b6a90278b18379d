/* SPDX-License-Identifier: MIT */
/* Fuzz target: iperf 2's wire format (txscale/rx_iperf2.h) on hostile
 * datagrams. The data is a datagram: its header is read (an id is never 0,
 * its magnitude fits int64, usec is a microsecond), and as a server report
 * read back after our own encoding of it, field for field. Any violated
 * property aborts. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <txscale/rx_iperf2.h>
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t id = 0;
	uint32_t sec, usec;
	uint64_t hint = size >= 8 ? (uint64_t)data[size - 1] << 24 | (uint64_t)data[size - 2] << 8 : 0;
	int rc = txs_ip2_hdr_read(data, size, hint, &id, &sec, &usec);
	CHECK(rc == 0 || rc == -EMSGSIZE || rc == -EPROTO);
	if (rc == 0) {
		CHECK(id != 0 && id != INT64_MIN);
		CHECK(usec <= 999999);
		/* what we write of it reads back the same (without the client's flags, as at -l 16:
		 * ids below 2^31) */
		uint8_t b[TXS_IP2_HDR_LEN];
		int64_t id2;
		uint32_t s2, u2;
		uint64_t mag = id < 0 ? (uint64_t)-id : (uint64_t)id;
		txs_ip2_hdr_write(b, id, sec, usec);
		if (mag <= 0x7fffffffull) {
			CHECK(txs_ip2_hdr_read(b, sizeof(b), id < 0 ? mag : 0, &id2, &s2, &u2) == 0);
			CHECK(s2 == sec && u2 == usec && id2 == id);
		}
	}
	struct txs_ip2_report r, r2;
	rc = txs_ip2_report_read(data, size, &r);
	CHECK(rc == 0 || rc == -EMSGSIZE || rc == -EPROTO);
	if (rc == 0) {
		CHECK(r.flags & TXS_IP2_F_VERSION1);
		uint8_t b[TXS_IP2_REPORT_LEN];
		r.flags |= TXS_IP2_F_SEQNO64B;
		r.flags &= ~TXS_IP2_F_EXTEND;
		txs_ip2_report_write(b, &r);
		CHECK(txs_ip2_report_read(b, sizeof(b), &r2) == 0);
		CHECK(r2.bytes == r.bytes && r2.errors == r.errors && r2.out_of_order == r.out_of_order &&
		      r2.datagrams == r.datagrams);
	}
	return 0;
}
