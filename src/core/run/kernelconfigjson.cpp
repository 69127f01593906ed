// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/kernelconfigjson.h"

#include <QJsonValue>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

constexpr QLatin1StringView kKeys[] = {"BLOCK_SIZE_M"_L1, "BLOCK_SIZE_N"_L1, "BLOCK_SIZE_K"_L1,
                                       "GROUP_SIZE_M"_L1, "num_warps"_L1,    "num_stages"_L1};

int *field(KernelConfig &c, int i) {
    int *fields[] = {&c.blockSizeM, &c.blockSizeN, &c.blockSizeK, &c.groupSizeM, &c.numWarps, &c.numStages};
    return fields[i];
}

} // namespace

std::optional<KernelConfig> KernelConfigJson::fromJson(const QJsonObject &o, QString *error) {
    KernelConfig c;
    for (int i = 0; i < 6; ++i) {
        const QJsonValue v = o.value(kKeys[i]);
        const double d = v.toDouble(-1);
        if (!v.isDouble() || d < 1 || d > 65536 || d != static_cast<double>(static_cast<int>(d))) {
            if (error)
                *error = u"config key \"%1\" must be a positive integer"_s.arg(kKeys[i]);
            return std::nullopt;
        }
        *field(c, i) = static_cast<int>(d);
    }
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() == "USE_TMA"_L1) {
            if (!it->isBool()) {
                if (error)
                    *error = u"config key \"USE_TMA\" must be true or false"_s;
                return std::nullopt;
            }
            c.useTma = it->toBool();
            continue;
        }
        bool known = false;
        for (const auto k : kKeys)
            known = known || it.key() == k;
        if (!known)
            c.extra.insert(it.key(), it.value());
    }
    return c;
}

QJsonObject KernelConfigJson::toJson(const KernelConfig &c) {
    QJsonObject o = c.extra;
    KernelConfig copy = c;
    for (int i = 0; i < 6; ++i)
        o.insert(kKeys[i], *field(copy, i));
    if (c.useTma)
        o.insert("USE_TMA"_L1, *c.useTma);
    return o;
}

QString KernelConfigJson::key(const KernelConfig &c) {
    QString s = u"m%1n%2k%3g%4w%5s%6"_s.arg(c.blockSizeM)
                    .arg(c.blockSizeN)
                    .arg(c.blockSizeK)
                    .arg(c.groupSizeM)
                    .arg(c.numWarps)
                    .arg(c.numStages);
    if (c.useTma.value_or(false))
        s += u't';
    return s;
}

std::optional<KernelConfig> KernelConfigJson::fromKey(QStringView key) {
    static const QRegularExpression re(u"^m(\\d+)n(\\d+)k(\\d+)g(\\d+)w(\\d+)s(\\d+)(t?)$"_s);
    const auto match = re.match(key.toString());
    if (!match.hasMatch())
        return std::nullopt;
    KernelConfig c;
    for (int i = 0; i < 6; ++i)
        *field(c, i) = match.capturedView(i + 1).toInt();
    if (!match.capturedView(7).isEmpty())
        c.useTma = true;
    return c;
}

quint64 KernelConfigJson::packed(const KernelConfig &c) {
    quint64 v = 0;
    KernelConfig copy = c;
    for (int i = 0; i < 6; ++i)
        v = (v << 10) | (static_cast<quint64>(*field(copy, i)) & 0x3ff);
    if (c.useTma.value_or(false))
        v |= quint64(1) << 63;
    return v;
}

int KernelConfigJson::value(const KernelConfig &c, Parameter p) {
    switch (p) {
    case Parameter::BlockM:
        return c.blockSizeM;
    case Parameter::BlockN:
        return c.blockSizeN;
    case Parameter::BlockK:
        return c.blockSizeK;
    case Parameter::GroupM:
        return c.groupSizeM;
    case Parameter::Warps:
        return c.numWarps;
    case Parameter::Stages:
        return c.numStages;
    }
    return 0;
}

QString KernelConfigJson::name(Parameter p) {
    return QString(kKeys[static_cast<int>(p)]);
}

QString KernelConfigJson::shortName(Parameter p) {
    static const char16_t *names[] = {u"BM", u"BN", u"BK", u"GM", u"warps", u"stages"};
    return QString::fromUtf16(names[static_cast<int>(p)]);
}

} // namespace moetune
