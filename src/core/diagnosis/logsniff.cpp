// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/logsniff.h"

using namespace Qt::StringLiterals;

namespace moetune {

LogSniff LogSniff::check(QByteArrayView head) {
    LogSniff s;
    head = head.first(std::min<qsizetype>(head.size(), headBytes));
    if (head.startsWith("\x1f\x8b"))
        s.kind = Kind::Gzip;
    else if (head.startsWith("\x28\xb5\x2f\xfd"))
        s.kind = Kind::Zstd;
    else if (head.startsWith(QByteArrayView("\xfd"
                                            "7zXZ\0",
                                            6)))
        s.kind = Kind::Xz;
    else if (head.size() >= 4 && head.startsWith("BZh") && head[3] >= '1' && head[3] <= '9')
        s.kind = Kind::Bzip2;
    s.nulOffset = head.indexOf('\0');
    if (s.kind == Kind::Text && s.nulOffset >= 0)
        s.kind = Kind::Binary;
    return s;
}

QString LogSniff::problem(const QString &label) const {
    auto compressed = [&](const QString &format, const QString &tool) {
        return u"%1 is %2-compressed, not a text log; nothing was diagnosed. Decompress it first (%3 -k "
               u"FILE), "
               u"or pipe it in (%3 -c FILE | moetune-cli diagnose -)."_s.arg(label, format, tool);
    };
    switch (kind) {
    case Kind::Text:
        return {};
    case Kind::Gzip:
        return compressed(u"gzip"_s, u"gunzip"_s);
    case Kind::Zstd:
        return compressed(u"zstd"_s, u"unzstd"_s);
    case Kind::Xz:
        return compressed(u"xz"_s, u"unxz"_s);
    case Kind::Bzip2:
        return compressed(u"bzip2"_s, u"bunzip2"_s);
    case Kind::Binary:
        break;
    }
    return u"%1 looks like a binary file, not a text log (NUL byte at offset %2); nothing was diagnosed. "
           u"Pass the server's text log (for example the file its stdout/stderr is redirected to)."_s
               .arg(label)
               .arg(nulOffset);
}

} // namespace moetune
