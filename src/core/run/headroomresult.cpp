// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/headroomresult.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// A config object -> its short key ("m16n32k64g1w4s3"); "" when it is not one.
QString configKey(const QJsonValue &v) {
    const QJsonObject o = v.toObject();
    const char *keys[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                          "GROUP_SIZE_M", "num_warps",    "num_stages"};
    const char *tags[] = {"m", "n", "k", "g", "w", "s"};
    QString out;
    for (int i = 0; i < 6; ++i) {
        const QJsonValue x = o.value(QLatin1StringView(keys[i]));
        if (!x.isDouble())
            return {};
        out += QLatin1StringView(tags[i]) + QString::number(x.toInt());
    }
    return out;
}

HeadroomResult::Kind kindOf(const QString &id) {
    if (id == "worth_tuning"_L1)
        return HeadroomResult::Kind::WorthTuning;
    if (id == "some_gain"_L1)
        return HeadroomResult::Kind::SomeGain;
    if (id == "little_to_gain"_L1)
        return HeadroomResult::Kind::LittleToGain;
    return HeadroomResult::Kind::Unknown;
}

QString gainText(double g) {
    return g > 0 ? u"%1x"_s.arg(g, 0, 'f', 2) : u"-"_s;
}

} // namespace

QString HeadroomResult::kindId(Kind k) {
    switch (k) {
    case Kind::WorthTuning:
        return u"worth_tuning"_s;
    case Kind::SomeGain:
        return u"some_gain"_s;
    case Kind::LittleToGain:
        return u"little_to_gain"_s;
    case Kind::Unknown:
        break;
    }
    return u"unknown"_s;
}

std::optional<HeadroomResult> HeadroomResult::fromJson(const QJsonObject &o, QString *error) {
    auto fail = [error](const QString &why) -> std::optional<HeadroomResult> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (o.value("type"_L1).toString() != "headroom"_L1)
        return fail(u"not a headroom event (type '%1')."_s.arg(o.value("type"_L1).toString()));
    if (!o.value("verdict"_L1).isString() || !o.value("sizes"_L1).isArray())
        return fail(u"the headroom event has no verdict or no sizes."_s);
    HeadroomResult r;
    r.raw = o;
    r.verdict = o.value("verdict"_L1).toString();
    r.kind = kindOf(o.value("kind"_L1).toString());
    r.backend = o.value("backend"_L1).toString();
    r.deviceName = o.value("device_name"_L1).toString();
    r.framework = o.value("framework"_L1).toString();
    r.assumed = o.value("assumed"_L1).toString();
    r.simulated = o.value("simulated"_L1).toBool();
    r.wallSeconds = o.value("wall_s"_L1).toDouble();
    r.units = o.value("units"_L1).toInt();
    r.prewarmUnits = std::max(0, o.value("prewarm"_L1).toObject().value("units"_L1).toInt());
    const QJsonObject ds = o.value("default_source"_L1).toObject();
    r.defaultSourceKind = ds.value("kind"_L1).toString();
    r.defaultSourcePath = ds.value("path"_L1).toString();
    int lastM = 0;
    for (const auto &v : o.value("sizes"_L1).toArray()) {
        const QJsonObject s = v.toObject();
        Size z;
        z.m = s.value("m"_L1).toInt();
        if (z.m <= 0 || z.m <= lastM)
            return fail(
                u"the headroom sizes are not positive and ascending (m = %1 after %2)."_s.arg(z.m).arg(
                    lastM));
        lastM = z.m;
        z.defaultUs = s.value("default_us"_L1).toDouble();
        z.bestUs = s.value("best_us"_L1).toDouble();
        z.gain = s.value("gain"_L1).toDouble();
        z.floorUs = s.value("floor_us"_L1).toDouble();
        z.bound = s.value("bound"_L1).toDouble();
        if (z.gain < 0 || z.defaultUs < 0 || z.bestUs < 0)
            return fail(u"the headroom size m = %1 has a negative figure."_s.arg(z.m));
        z.defaultConfig = configKey(s.value("default_config"_L1));
        z.bestConfig = configKey(s.value("best_config"_L1));
        r.sizes.append(z);
    }
    for (const auto &v : o.value("ranges"_L1).toArray()) {
        const QJsonObject g = v.toObject();
        Range rg;
        rg.gainClass = g.value("class"_L1).toString();
        rg.mFrom = g.value("m_from"_L1).toInt();
        rg.mTo = g.value("m_to"_L1).toInt();
        rg.gain = g.value("gain"_L1).toDouble();
        rg.gainMin = g.value("gain_min"_L1).toDouble();
        rg.gainMax = g.value("gain_max"_L1).toDouble();
        rg.label = g.value("label"_L1).toString();
        r.ranges.append(rg);
    }
    return r;
}

QString HeadroomResult::headline() const {
    QString s = verdict;
    if (simulated && !s.startsWith("SIMULATED"_L1))
        s = u"SIMULATED: "_s + s;
    return s;
}

double HeadroomResult::maxGain() const {
    double g = 0;
    for (const Size &z : sizes)
        g = qMax(g, z.gain);
    return g;
}

QString HeadroomResult::tableText() const {
    QString out;
    out += headline() + u'\n';
    out += u"Server's config: %1%2; backend %3 on %4%5\n"_s.arg(
        defaultSourceKind == "file"_L1 ? u"its file "_s + defaultSourcePath : u"its built-in heuristic"_s,
        framework.isEmpty() ? QString() : u" (%1)"_s.arg(framework), backend, deviceName,
        simulated ? u" [SIMULATED]"_s : QString());
    if (!assumed.isEmpty())
        out += u"Not seen: %1\n"_s.arg(assumed);
    out += u"\nRange          Likely gain  (min-max)\n"_s;
    for (const Range &rg : ranges)
        out += u"%1 %2  (%3-%4)\n"_s.arg(rg.label, -14)
                   .arg(gainText(rg.gain), 11)
                   .arg(gainText(rg.gainMin), gainText(rg.gainMax));
    out += u"\n     M   server us    best us   gain   floor us  bound  best screened\n"_s;
    for (const Size &z : sizes)
        out += u"%1 %2 %3 %4 %5 %6  %7\n"_s.arg(z.m, 6)
                   .arg(z.defaultUs > 0 ? QString::number(z.defaultUs, 'f', 1) : u"-"_s, 11)
                   .arg(z.bestUs > 0 ? QString::number(z.bestUs, 'f', 1) : u"-"_s, 10)
                   .arg(gainText(z.gain), 6)
                   .arg(z.floorUs > 0 ? QString::number(z.floorUs, 'f', 1) : u"-"_s, 10)
                   .arg(gainText(z.bound), 6)
                   .arg(z.bestConfig == z.defaultConfig ? u"(the server's)"_s : z.bestConfig);
    out += u"\n%1 units in %2 s.\n"_s.arg(units).arg(wallSeconds, 0, 'f', 1);
    return out;
}

QString HeadroomResult::prewarmNote() const {
    if (prewarmUnits <= 0)
        return {};
    return u"Meanwhile the host compiles the kernels of the tune's first %1 timings in the background "
           "(CPU only), so a tune started next waits less for them; a tune or another check stops it."_s.arg(
               prewarmUnits);
}

} // namespace moetune
