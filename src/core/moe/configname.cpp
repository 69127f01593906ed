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

std::optional<ConfigName> ConfigName::forServer(Framework server, int experts, int logicalN,
                                                const QString &deviceName, const QString &dtype,
                                                std::optional<std::array<int, 2>> blockShape,
                                                bool perChannelQuant, bool down, QString *error) {
    auto fail = [error](const QString &why) -> std::optional<ConfigName> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (server != Framework::SGLang && server != Framework::VLLM)
        return fail(u"Unknown server framework: the file name depends on it (SGLang or vLLM)."_s);
    ConfigName c;
    c.experts = experts;
    c.n = logicalN;
    c.deviceName = deviceName;
    const bool plain = dtype.isEmpty() || dtype == "bf16"_L1 || dtype == "fp16"_L1 ||
                       dtype == "bfloat16"_L1 || dtype == "float16"_L1 || dtype == "auto"_L1;
    c.dtype = plain ? QString() : dtype;
    const bool sglang = server == Framework::SGLang;
    // vLLM's int8_w8a8 layers share the plain file.
    if (!sglang && c.dtype == "int8_w8a8"_L1)
        c.dtype.clear();
    // [0, group] describes group-quantised weights; no server writes it into the name.
    if (blockShape && (*blockShape)[0] > 0 && (*blockShape)[1] > 0)
        c.blockShape = blockShape;
    // Both servers read N from the packed down weight (two int4 per byte); only vLLM doubles it back.
    if (dtype == "int4_w4a16"_L1 && sglang) {
        if (logicalN % 2 != 0)
            return fail(u"int4_w4a16 packs two weights per byte: N must be even (got %1)."_s.arg(logicalN));
        c.n = logicalN / 2;
    }
    c.perChannelQuant = perChannelQuant && sglang;
    c.down = down && sglang;
    return c;
}

int ConfigName::logicalN(Framework server) const {
    return server == Framework::SGLang && dtype == "int4_w4a16"_L1 ? 2 * n : n;
}

const QStringList &ConfigName::knownDtypes() {
    static const QStringList dtypes{u"fp8_w8a8"_s, u"int8_w8a8"_s, u"int8_w8a16"_s, u"int4_w4a16"_s,
                                    u"float32"_s};
    return dtypes;
}

namespace {

bool isEllipsis(QStringView s) {
    return s == u"..."_s || s == u"\u2026"_s || s == u"\u2026."_s || s == u"...."_s;
}

} // namespace

std::optional<PartialConfigName> PartialConfigName::parse(QStringView path) {
    const qsizetype slash = std::max(path.lastIndexOf(u'/'), path.lastIndexOf(u'\\'));
    const QStringView folder = slash >= 0 ? path.first(slash) : QStringView();
    QStringView name = path.sliced(slash + 1).trimmed();
    if (!name.endsWith(u".json"_s))
        return std::nullopt;
    name.chop(5);
    PartialConfigName p;
    if (name.endsWith(u"_down"_s)) {
        p.down = true;
        name.chop(5);
    }
    const QStringView lastFolder =
        folder.sliced(std::max(folder.lastIndexOf(u'/'), folder.lastIndexOf(u'\\')) + 1);
    p.folderElided = isEllipsis(lastFolder) || folder.startsWith(u"..."_s) ||
                     folder.startsWith(u"\u2026"_s) || folder.contains(u"/.../"_s) ||
                     folder.contains(u"/\u2026/"_s);
    // Fields split at commas outside "[...]" (block_shape=[128, 128]).
    QList<QStringView> fields;
    int depth = 0;
    qsizetype from = 0;
    for (qsizetype i = 0; i <= name.size(); ++i) {
        if (i < name.size() && name[i] == u'[')
            ++depth;
        else if (i < name.size() && name[i] == u']')
            depth = std::max(0, depth - 1);
        if (i == name.size() || (name[i] == u',' && depth == 0)) {
            fields.append(name.sliced(from, i - from).trimmed());
            from = i + 1;
        }
    }
    // Field kinds in the servers' order: E, N, device_name, dtype, block_shape, per_channel_quant. An
    // ellipsis may hide any kind between the printed fields around it; a kind outside every such gap that is
    // not printed is absent (dtype bf16/fp16, no block shape).
    bool sawField = false;
    bool hidden[6] = {false, false, false, false, false, false};
    int last = -1;
    int cutFrom = -1; // an ellipsis since the last printed field: kinds from here may be hidden
    auto closeGap = [&](int upTo) {
        if (cutFrom < 0)
            return;
        for (int k = cutFrom; k <= upTo && k < 6; ++k)
            hidden[k] = true;
        cutFrom = -1;
    };
    static const QRegularExpression block =
        precompiledRegex(u"^block_shape=\\[(\\d{1,5}), ?(\\d{1,5})\\]$"_s);
    for (const QStringView f : fields) {
        if (isEllipsis(f) || f.endsWith(u"..."_s) || f.endsWith(u"\u2026"_s)) {
            p.nameElided = true;
            if (f.startsWith(u"device_name="_s)) {
                sawField = true;
                last = 2;
                cutFrom = 2; // the device name itself, and maybe what followed it
            } else if (cutFrom < 0) {
                cutFrom = last + 1;
            }
            continue;
        }
        int kind = -1;
        if (f.startsWith(u"E="_s)) {
            kind = 0;
            bool ok = false;
            const int e = f.sliced(2).toInt(&ok);
            if (ok && e > 0)
                p.experts = e;
        } else if (f.startsWith(u"N="_s)) {
            kind = 1;
            bool ok = false;
            const int n = f.sliced(2).toInt(&ok);
            if (ok && n > 0)
                p.n = n;
        } else if (f.startsWith(u"device_name="_s)) {
            kind = 2;
            p.deviceName = f.sliced(12).toString();
        } else if (f.startsWith(u"dtype="_s)) {
            kind = 3;
            p.dtype = f.sliced(6).toString();
        } else if (const QRegularExpressionMatch m = block.match(f.toString()); m.hasMatch()) {
            kind = 4;
            p.blockShape = std::array<int, 2>{m.capturedView(1).toInt(), m.capturedView(2).toInt()};
        } else if (f == u"per_channel_quant=True"_s) {
            kind = 5;
        }
        if (kind < 0)
            continue;
        sawField = true;
        closeGap(kind - 1);
        last = kind;
    }
    closeGap(5);
    if (!sawField)
        return std::nullopt;
    if (!p.dtype && !hidden[3])
        p.dtype = QString();
    if (!p.blockShape && !hidden[4])
        p.blockShape = std::optional<std::array<int, 2>>{};
    if (p.deviceName) {
        const QString d = p.deviceName->toLower();
        p.deviceUnreadable =
            d == u"nvidia_graphics_device"_s || d == u"graphics_device"_s || d == u"nvidia graphics device"_s;
    }
    if (!p.nameElided && !p.folderElided && !p.deviceUnreadable && ConfigName::parse(path))
        return std::nullopt;
    if (!p.nameElided && !p.folderElided && !p.deviceUnreadable)
        return std::nullopt; // not shortened, just not a config name
    return p;
}

QStringList PartialConfigName::unknownParts() const {
    QStringList out;
    if (!experts)
        out << u"E"_s;
    if (!n)
        out << u"N"_s;
    if (!deviceName)
        out << u"GPU name"_s;
    if (!dtype)
        out << u"dtype"_s;
    if (!blockShape)
        out << u"block shape"_s;
    return out;
}

QString PartialConfigName::shapeText() const {
    QStringList parts;
    parts << (experts ? u"E="_s + QString::number(*experts) : u"E=?"_s);
    parts << (n ? u"N="_s + QString::number(*n) : u"N=?"_s);
    if (!dtype)
        parts << u"dtype unknown"_s;
    else
        parts << (dtype->isEmpty() ? u"bf16"_s : *dtype);
    if (!blockShape)
        parts << u"block shape unknown"_s;
    else if (*blockShape)
        parts << u"block [%1, %2]"_s.arg((**blockShape)[0]).arg((**blockShape)[1]);
    return parts.join(u", "_s);
}

std::optional<ConfigName> PartialConfigName::whole() const {
    if (!experts || !n || !deviceName || !dtype || !blockShape || deviceUnreadable)
        return std::nullopt;
    ConfigName c;
    c.experts = *experts;
    c.n = *n;
    c.deviceName = *deviceName;
    c.dtype = *dtype;
    c.blockShape = *blockShape;
    c.down = down;
    return c;
}

} // namespace moetune
