// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// hostText over arbitrary bytes a host might send (read as UTF-8, as the agent's JSON strings are): the
// result never holds a character a terminal or a widget would act on, never exceeds its bound, is left
// unchanged by a second cleaning, and keeps every visible character of short ordinary text.
#include "core/host/hosttext.h"
#include "fuzzcheck.h"

#include <QString>

#include <cstddef>
#include <cstdint>

namespace {

bool hidden(const QString &s, qsizetype i) {
    const QChar c = s[i];
    if (c.isHighSurrogate() && i + 1 < s.size() && s[i + 1].isLowSurrogate())
        return false;
    if (c.isLowSurrogate() && i > 0 && s[i - 1].isHighSurrogate())
        return false;
    return c.unicode() < 0x20 || c.unicode() == 0x7f || c.category() == QChar::Other_Control ||
           c.category() == QChar::Other_Format || c.isSurrogate() || c.unicode() == 0x2028 ||
           c.unicode() == 0x2029;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    const qsizetype max = 1 + data[0] % 64; // small bounds reach the cut often
    const QString raw = QString::fromUtf8(reinterpret_cast<const char *>(data + 1), qsizetype(size - 1));
    const QString out = moetune::hostText(raw, max);
    for (qsizetype i = 0; i < out.size(); ++i)
        FUZZ_CHECK(!hidden(out, i));
    // At most max characters (a pair counts once) plus the "… (N more characters)" note.
    FUZZ_CHECK(out.size() <= 2 * max + 40);
    if (!out.contains(u'…'))
        FUZZ_CHECK(moetune::hostText(out, max) == out); // idempotent when nothing was cut
    bool plain = raw.size() <= max;
    for (QChar c : raw)
        plain = plain && c.unicode() >= 0x20 && c.unicode() < 0x7f;
    if (plain)
        FUZZ_CHECK(out == raw); // ordinary text passes unchanged
    return 0;
}
