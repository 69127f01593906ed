// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/moebackend.h"

#include <QJsonValue>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

struct ConfigsName {
    MoeBackend::Configs configs;
    QLatin1StringView name;
};

constexpr ConfigsName kConfigsNames[] = {
    {MoeBackend::Configs::Used, "used"_L1},       {MoeBackend::Configs::Unused, "unused"_L1},
    {MoeBackend::Configs::Partly, "partly"_L1},   {MoeBackend::Configs::Auto, "auto"_L1},
    {MoeBackend::Configs::Ignored, "ignored"_L1}, {MoeBackend::Configs::Unknown, "unknown"_L1},
};

} // namespace

QString MoeBackend::configsName(Configs configs) {
    for (const ConfigsName &c : kConfigsNames) {
        if (c.configs == configs)
            return c.name;
    }
    return u"unknown"_s;
}

QString MoeBackend::normalise(QStringView printed) {
    QString out;
    out.reserve(printed.size());
    bool gap = false;
    for (const QChar c : printed) {
        if (c.isLetterOrNumber()) {
            if (gap && !out.isEmpty())
                out += u'_';
            out += c.toUpper();
            gap = false;
        } else {
            gap = true; // quotes, spaces, '-' and '_' alike: "FlashInfer TRTLLM" is FLASHINFER_TRTLLM
        }
    }
    return out;
}

std::optional<MoeBackend> MoeBackend::fromJson(const QJsonObject &object, QString *error) {
    auto fail = [error](const QString &message) {
        if (error)
            *error = message;
        return std::nullopt;
    };
    auto text = [&object](QLatin1StringView key) { return object.value(key).toString(); };
    for (const QLatin1StringView key :
         {"name"_L1, "scheme"_L1, "triton_configs"_L1, "kernel"_L1, "note"_L1}) {
        const QJsonValue v = object.value(key);
        if (!v.isUndefined() && !v.isNull() && !v.isString())
            return fail(u"moe_backends entry: the field \""_s + key + u"\" must be a string."_s);
    }
    MoeBackend b;
    b.name = normalise(text("name"_L1));
    if (b.name.isEmpty())
        return fail(u"moe_backends entry: the field \"name\" is missing or empty."_s);
    const QString where = u"moe_backends entry \""_s + text("name"_L1) + u'"';
    b.scheme = normalise(text("scheme"_L1));
    const QString configs = text("triton_configs"_L1);
    bool known = false;
    for (const ConfigsName &c : kConfigsNames) {
        if (c.name == configs && c.configs != Configs::Unknown) {
            b.configs = c.configs;
            known = true;
        }
    }
    if (!known)
        return fail(where + u": triton_configs \""_s + configs +
                    u"\" is not one of used, unused, partly, auto, ignored."_s);
    b.kernel = text("kernel"_L1);
    b.note = text("note"_L1);
    return b;
}

std::optional<MoeBackend> MoeBackend::find(const QList<MoeBackend> &table, QStringView name,
                                           QStringView scheme) {
    const QString n = normalise(name);
    const QString s = normalise(scheme);
    const MoeBackend *any = nullptr;
    for (const MoeBackend &b : table) {
        if (b.name != n)
            continue;
        if (!b.scheme.isEmpty() && b.scheme == s)
            return b;
        if (b.scheme.isEmpty())
            any = &b;
    }
    return any ? std::optional<MoeBackend>(*any) : std::nullopt;
}

} // namespace moetune
