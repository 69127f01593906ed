// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/moe/configname.h"
#include "core/moe/precompiledregex.h"

#include <QRegularExpression>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace moetune {

std::optional<ConfigName> ConfigName::parse(QStringView fileNameOrPath) {
    qsizetype slash = std::max(fileNameOrPath.lastIndexOf(u'/'), fileNameOrPath.lastIndexOf(u'\\'));
    // A device name cannot hold '/', but "[128, 128]" never does either, so the last separator is safe.
    const QString name = fileNameOrPath.mid(slash + 1).trimmed().toString();
    static const QRegularExpression re = precompiledRegex(
        u"^E=(\\d{1,6}),N=(\\d{1,7}),device_name=([^,]*?)(?:,dtype=([A-Za-z0-9_]+?))?"
        "(?:,block_shape=\\[(\\d{1,5}), ?(\\d{1,5})\\])?(?:,per_channel_quant=(True))?(_down)?\\.json$"_s);
    const QRegularExpressionMatch m = re.match(name);
    if (!m.hasMatch())
        return std::nullopt;
    ConfigName c;
    c.experts = m.capturedView(1).toInt();
    c.n = m.capturedView(2).toInt();
    if (c.experts <= 0 || c.n <= 0)
        return std::nullopt;
    c.deviceName = m.captured(3);
    c.dtype = m.captured(4);
    if (m.capturedLength(5) > 0) {
        const int bn = m.capturedView(5).toInt();
        const int bk = m.capturedView(6).toInt();
        if (bn <= 0 || bk <= 0)
            return std::nullopt;
        c.blockShape = std::array<int, 2>{bn, bk};
    }
    c.perChannelQuant = m.capturedLength(7) > 0;
    c.down = m.capturedLength(8) > 0;
    return c;
}

QString ConfigName::fileName(Framework dialect) const {
    QString s =
        u"E="_s + QString::number(experts) + u",N="_s + QString::number(n) + u",device_name="_s + deviceName;
    if (!dtype.isEmpty())
        s += u",dtype="_s + dtype;
    if (blockShape) {
        const QString sep = dialect == Framework::VLLM ? u","_s : u", "_s;
        s += u",block_shape=["_s + QString::number((*blockShape)[0]) + sep +
             QString::number((*blockShape)[1]) + u']';
    }
    if (dialect != Framework::VLLM) {
        if (perChannelQuant)
            s += u",per_channel_quant=True"_s;
        if (down)
            s += u"_down"_s;
    }
    return s + u".json"_s;
}

const QStringList &ConfigName::knownDtypes() {
    static const QStringList dtypes{u"fp8_w8a8"_s, u"int8_w8a8"_s, u"int8_w8a16"_s, u"int4_w4a16"_s,
                                    u"float32"_s};
    return dtypes;
}

} // namespace moetune
