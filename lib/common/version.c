/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <txscale/common.h>

TXS_API const char *txs_version(void)
{
	return TXS_VERSION_STRING;
}

TXS_API int txs_version_major(void)
{
	return TXS_VERSION_MAJOR;
}

TXS_API int txs_version_minor(void)
{
	return TXS_VERSION_MINOR;
}

TXS_API int txs_version_patch(void)
{
	return TXS_VERSION_PATCH;
}

/* The codes whose meaning in the library is narrower than the C library's
 * words for them (the error line beside the code says which value). */
static const struct {
	int code;
	const char *text;
} own[] = {
	{ EINVAL, "invalid value: the error line names the option and the value" },
	{ EALREADY, "a session runs once: it has run already" },
	{ ESTALE, "the sender's summary is older than this run" },
	{ EFBIG, "file larger than the library reads" },
	{ EMFILE, "the open-file limit (RLIMIT_NOFILE) is below what the run needs" },
	{ ENETDOWN, "no link left up" },
	{ ENODEV, "no such device or input" },
	{ EOPNOTSUPP, "not supported by this device, kernel or build" },
	{ EIO, "device or system failure" },
};

TXS_API const char *txs_strerror(int err)
{
	int e = err < 0 ? -err : err;
	if (e == 0)
		return "success";
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (own[i].code == e)
			return own[i].text;
	return strerror(e);
}
