// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/fleet/fleetrecord.h"

#include "core/util/errorout.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>

#include <algorithm>
#include <array>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

constexpr qint64 kMaxFleetRecordBytes = 64LL << 20; // a record of 1,000 hosts is well under 10 MiB

struct FleetStageNames {
    FleetHostStage stage;
    const char *name;
    const char *text;
};

constexpr std::array<FleetStageNames, 17> kFleetStages{{
    {FleetHostStage::Waiting, "waiting", "Waiting"},
    {FleetHostStage::Connecting, "connecting", "Connecting"},
    {FleetHostStage::Diagnosing, "diagnosing", "Diagnosing"},
    {FleetHostStage::Diagnosed, "diagnosed", "Diagnosed"},
    {FleetHostStage::Unreachable, "unreachable", "Unreachable"},
    {FleetHostStage::Failed, "failed", "Failed"},
    {FleetHostStage::Tuning, "tuning", "Tuning"},
    {FleetHostStage::Tuned, "tuned", "Tuned"},
    {FleetHostStage::Importing, "importing", "Importing the result"},
    {FleetHostStage::Pushing, "pushing", "Pushing"},
    {FleetHostStage::Restarting, "restarting", "Restarting"},
    {FleetHostStage::Proved, "proved", "Proved"},
    {FleetHostStage::ProofFailed, "proof-failed", "Proof failed"},
    {FleetHostStage::Undoing, "undoing", "Undoing"},
    {FleetHostStage::Undone, "undone", "Undone"},
    {FleetHostStage::UndoFailed, "undo-failed", "Undo failed"},
    {FleetHostStage::Skipped, "skipped", "Skipped"},
}};

QJsonArray fleetRecordStrings(const QStringList &list) {
    return QJsonArray::fromStringList(list);
}

QStringList fleetRecordList(const QJsonValue &v) {
    QStringList out;
    for (const QJsonValue x : v.toArray())
        out.append(x.toString());
    return out;
}

QJsonObject fleetFactsToJson(const FleetHostFacts &f) {
    return QJsonObject{{"host"_L1, f.host},
                       {"framework"_L1, f.framework},
                       {"framework_version"_L1, f.frameworkVersion},
                       {"triton_version"_L1, f.tritonVersion},
                       {"triton_folder"_L1, f.tritonFolder},
                       {"device_name"_L1, f.deviceName},
                       {"experts"_L1, f.experts},
                       {"intermediate"_L1, f.intermediate},
                       {"dtype"_L1, f.dtype},
                       {"block_shape"_L1, f.blockShape},
                       {"kernel_source_hash"_L1, f.kernelSourceHash},
                       {"missing_config"_L1, f.missingConfig}};
}

FleetHostFacts fleetFactsFromJson(const QJsonObject &o) {
    FleetHostFacts f;
    f.host = o.value("host"_L1).toString();
    f.framework = o.value("framework"_L1).toString();
    f.frameworkVersion = o.value("framework_version"_L1).toString();
    f.tritonVersion = o.value("triton_version"_L1).toString();
    f.tritonFolder = o.value("triton_folder"_L1).toString();
    f.deviceName = o.value("device_name"_L1).toString();
    f.experts = o.value("experts"_L1).toInt();
    f.intermediate = o.value("intermediate"_L1).toInt();
    f.dtype = o.value("dtype"_L1).toString();
    f.blockShape = o.value("block_shape"_L1).toString();
    f.kernelSourceHash = o.value("kernel_source_hash"_L1).toString();
    f.missingConfig = o.value("missing_config"_L1).toString();
    return f;
}

bool isSafeFleetRecordId(const QString &id) {
    bool ok = !id.isEmpty() && id.size() <= 128 && !id.startsWith(u'.');
    for (const QChar c : id)
        ok = ok && c.unicode() < 128 && (c.isLetterOrNumber() || c == u'-' || c == u'_' || c == u'.');
    return ok && !id.contains(u".."_s);
}

QString fleetRecordFolder(const QString &workspacePath) {
    return QDir(workspacePath).filePath(u"fleet"_s);
}

} // namespace

QString fleetStageName(FleetHostStage stage) {
    for (const FleetStageNames &s : kFleetStages) {
        if (s.stage == stage)
            return QString::fromLatin1(s.name);
    }
    return u"waiting"_s;
}

std::optional<FleetHostStage> fleetStageFromName(const QString &name) {
    for (const FleetStageNames &s : kFleetStages) {
        if (name == QLatin1StringView(s.name))
            return s.stage;
    }
    return std::nullopt;
}

QString fleetStageText(FleetHostStage stage) {
    for (const FleetStageNames &s : kFleetStages) {
        if (s.stage == stage)
            return QString::fromLatin1(s.text);
    }
    return u"Waiting"_s;
}

bool fleetStageIsTerminalFailure(FleetHostStage stage) {
    return stage == FleetHostStage::Unreachable || stage == FleetHostStage::Failed ||
           stage == FleetHostStage::ProofFailed || stage == FleetHostStage::UndoFailed;
}

// ---- FleetHostRecord ----

QJsonObject FleetHostRecord::toJson() const {
    const bool hasPush = !push.files.isEmpty() || !push.runId.isEmpty();
    return QJsonObject{{"name"_L1, host.name},
                       {"address"_L1, host.address},
                       {"port"_L1, host.port},
                       {"user"_L1, host.user},
                       {"groups"_L1, fleetRecordStrings(host.groups)},
                       {"tags"_L1, fleetRecordStrings(host.tags)},
                       {"stage"_L1, fleetStageName(stage)},
                       {"reason"_L1, reason},
                       {"gpu"_L1, gpu},
                       {"framework"_L1, framework},
                       {"framework_version"_L1, frameworkVersion},
                       {"triton"_L1, triton},
                       {"model"_L1, model},
                       {"moe_kernel"_L1, moeKernel},
                       {"findings"_L1, fleetRecordStrings(findings)},
                       {"facts"_L1, fleetFactsToJson(facts)},
                       {"group"_L1, group},
                       {"run_id"_L1, runId},
                       {"push"_L1, hasPush ? QJsonValue(push.toJson()) : QJsonValue()},
                       {"proof"_L1, proof},
                       {"serving_verdict"_L1, servingVerdict},
                       {"undone"_L1, undone},
                       {"started_at"_L1, startedAt},
                       {"ended_at"_L1, endedAt}};
}

std::optional<FleetHostRecord> FleetHostRecord::fromJson(const QJsonObject &o, QString *error) {
    FleetHostRecord r;
    r.host.name = o.value("name"_L1).toString();
    if (r.host.name.isEmpty()) {
        failWith(error, u"A host of the fleet record has no name."_s);
        return std::nullopt;
    }
    r.host.address = o.value("address"_L1).toString();
    r.host.port = o.value("port"_L1).toInt();
    r.host.user = o.value("user"_L1).toString();
    r.host.groups = fleetRecordList(o.value("groups"_L1));
    r.host.tags = fleetRecordList(o.value("tags"_L1));
    const QString stageName = o.value("stage"_L1).toString();
    const auto stage = fleetStageFromName(stageName);
    if (!stage) {
        failWith(error, u"The fleet record gives host %1 the unknown stage \"%2\"."_s.arg(
                            r.host.name, stageName.left(40)));
        return std::nullopt;
    }
    r.stage = *stage;
    r.reason = o.value("reason"_L1).toString();
    r.gpu = o.value("gpu"_L1).toString();
    r.framework = o.value("framework"_L1).toString();
    r.frameworkVersion = o.value("framework_version"_L1).toString();
    r.triton = o.value("triton"_L1).toString();
    r.model = o.value("model"_L1).toString();
    r.moeKernel = o.value("moe_kernel"_L1).toString();
    r.findings = fleetRecordList(o.value("findings"_L1));
    r.facts = fleetFactsFromJson(o.value("facts"_L1).toObject());
    r.group = o.value("group"_L1).toInt(-1);
    r.runId = o.value("run_id"_L1).toString();
    if (o.value("push"_L1).isObject()) {
        QString why;
        auto push = PushRecord::fromJson(o.value("push"_L1).toObject(), &why);
        if (!push) {
            failWith(error, u"Host %1 of the fleet record: %2"_s.arg(r.host.name, why));
            return std::nullopt;
        }
        r.push = *push;
    }
    r.proof = o.value("proof"_L1).toString();
    r.servingVerdict = o.value("serving_verdict"_L1).toString();
    r.undone = o.value("undone"_L1).toBool();
    r.startedAt = o.value("started_at"_L1).toDouble();
    r.endedAt = o.value("ended_at"_L1).toDouble();
    return r;
}

// ---- FleetGroupRecord ----

QJsonObject FleetGroupRecord::toJson() const {
    return QJsonObject{{"key"_L1, fleetFactsToJson(group.key)},
                       {"hosts"_L1, fleetRecordStrings(group.hosts)},
                       {"framework_versions"_L1, fleetRecordStrings(group.frameworkVersions)},
                       {"tune_host"_L1, tuneHost},
                       {"run_id"_L1, runId},
                       {"result_file"_L1, resultFile},
                       {"canary"_L1, canary},
                       {"state"_L1, state},
                       {"reason"_L1, reason}};
}

std::optional<FleetGroupRecord> FleetGroupRecord::fromJson(const QJsonObject &o, QString *error) {
    FleetGroupRecord g;
    g.group.key = fleetFactsFromJson(o.value("key"_L1).toObject());
    g.group.hosts = fleetRecordList(o.value("hosts"_L1));
    if (g.group.hosts.isEmpty()) {
        failWith(error, u"A group of the fleet record has no hosts."_s);
        return std::nullopt;
    }
    g.group.frameworkVersions = fleetRecordList(o.value("framework_versions"_L1));
    g.tuneHost = o.value("tune_host"_L1).toString();
    g.runId = o.value("run_id"_L1).toString();
    g.resultFile = o.value("result_file"_L1).toString();
    g.canary = o.value("canary"_L1).toString();
    g.state = o.value("state"_L1).toString();
    g.reason = o.value("reason"_L1).toString();
    return g;
}

// ---- FleetRecord ----

FleetHostRecord *FleetRecord::host(const QString &name) {
    for (FleetHostRecord &h : hosts) {
        if (h.host.name == name)
            return &h;
    }
    return nullptr;
}

const FleetHostRecord *FleetRecord::host(const QString &name) const {
    for (const FleetHostRecord &h : hosts) {
        if (h.host.name == name)
            return &h;
    }
    return nullptr;
}

int FleetRecord::count(FleetHostStage stage) const {
    return int(std::count_if(hosts.cbegin(), hosts.cend(),
                             [stage](const FleetHostRecord &h) { return h.stage == stage; }));
}

void FleetRecord::regroup() {
    // Only hosts a diagnosis filled in take part; an unreachable host has no facts and is in no group.
    QList<FleetHostFacts> facts;
    for (const FleetHostRecord &h : std::as_const(hosts)) {
        if (!h.facts.host.isEmpty())
            facts.append(h.facts);
    }
    const FleetGrouping grouping = groupFleetHosts(facts);

    const QList<FleetGroupRecord> before = groups;
    groups.clear();
    for (const FleetConfigGroup &g : grouping.groups) {
        FleetGroupRecord r;
        r.group = g;
        r.state = u"diagnosed"_s;
        // A group formed again with the same key keeps what was done for it (tuning run, rollout).
        for (const FleetGroupRecord &old : before) {
            if (fleetFactDifferences(old.group.key, g.key).isEmpty()) {
                r.tuneHost = old.tuneHost;
                r.runId = old.runId;
                r.resultFile = old.resultFile;
                r.canary = old.canary;
                r.state = old.state.isEmpty() ? r.state : old.state;
                r.reason = old.reason;
                break;
            }
        }
        groups.append(r);
    }
    differences = grouping.differences;
    nothingMissing = grouping.nothingMissing;

    for (FleetHostRecord &h : hosts) {
        h.group = -1;
        for (int i = 0; i < groups.size(); ++i) {
            if (groups.at(i).group.hosts.contains(h.host.name)) {
                h.group = i;
                break;
            }
        }
        for (const auto &[name, why] : grouping.notGrouped) {
            if (name == h.host.name && h.stage == FleetHostStage::Diagnosed)
                h.reason = u"In no group: %1."_s.arg(why);
        }
    }
}

QJsonObject FleetRecord::toJson() const {
    QJsonArray hs;
    for (const FleetHostRecord &h : hosts)
        hs.append(h.toJson());
    QJsonArray gs;
    for (const FleetGroupRecord &g : groups)
        gs.append(g.toJson());
    QJsonArray ds;
    for (const FleetGroupDifference &d : differences)
        ds.append(QJsonObject{
            {"first"_L1, d.first}, {"second"_L1, d.second}, {"reasons"_L1, fleetRecordStrings(d.reasons)}});
    return QJsonObject{{"format"_L1, u"moetune-fleet"_s},
                       {"version"_L1, 1},
                       {"id"_L1, id},
                       {"created_at"_L1, createdAt},
                       {"inventory"_L1, inventory},
                       {"selection"_L1, selection},
                       {"hosts"_L1, hs},
                       {"groups"_L1, gs},
                       {"differences"_L1, ds},
                       {"nothing_missing"_L1, fleetRecordStrings(nothingMissing)}};
}

std::optional<FleetRecord> FleetRecord::fromJson(const QJsonObject &o, QString *error) {
    if (o.value("format"_L1).toString() != "moetune-fleet"_L1 || o.value("version"_L1).toInt() != 1) {
        failWith(error, u"Not a moetune fleet record (format \"moetune-fleet\", version 1)."_s);
        return std::nullopt;
    }
    FleetRecord r;
    r.id = o.value("id"_L1).toString();
    if (!isSafeFleetRecordId(r.id)) {
        failWith(error, u"The fleet record's id is missing or cannot name a file."_s);
        return std::nullopt;
    }
    r.createdAt = o.value("created_at"_L1).toDouble();
    r.inventory = o.value("inventory"_L1).toString();
    r.selection = o.value("selection"_L1).toString();
    for (const QJsonValue v : o.value("hosts"_L1).toArray()) {
        auto h = FleetHostRecord::fromJson(v.toObject(), error);
        if (!h)
            return std::nullopt;
        r.hosts.append(*h);
    }
    for (const QJsonValue v : o.value("groups"_L1).toArray()) {
        auto g = FleetGroupRecord::fromJson(v.toObject(), error);
        if (!g)
            return std::nullopt;
        r.groups.append(*g);
    }
    for (const FleetHostRecord &h : std::as_const(r.hosts)) {
        if (h.group < -1 || h.group >= r.groups.size()) {
            failWith(error, u"Host %1 of the fleet record names group %2, which the record does not have."_s
                                .arg(h.host.name)
                                .arg(h.group + 1));
            return std::nullopt;
        }
    }
    for (const QJsonValue v : o.value("differences"_L1).toArray()) {
        const QJsonObject d = v.toObject();
        r.differences.append({d.value("first"_L1).toInt(), d.value("second"_L1).toInt(),
                              fleetRecordList(d.value("reasons"_L1))});
    }
    r.nothingMissing = fleetRecordList(o.value("nothing_missing"_L1));
    return r;
}

bool FleetRecord::save(const QString &workspacePath, QString *error) const {
    if (!isSafeFleetRecordId(id))
        return failWith(
            error, u"The fleet record's id '%1' cannot name a file; nothing was written."_s.arg(id.left(80)));
    const QString folder = fleetRecordFolder(workspacePath);
    if (!QDir().mkpath(folder))
        return failWith(error, u"Could not create %1"_s.arg(QDir::toNativeSeparators(folder)));
    const QString path = QDir(folder).filePath(id + u".json"_s);
    const QByteArray bytes = QJsonDocument(toJson()).toJson(QJsonDocument::Indented);
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
        return failWith(error,
                        u"Could not write %1: %2"_s.arg(QDir::toNativeSeparators(path), f.errorString()));
    return true;
}

std::optional<FleetRecord> FleetRecord::load(const QString &file, QString *error) {
    const QFileInfo info(file);
    if (!info.exists() || !info.isFile()) {
        failWith(error, u"%1 is not a file"_s.arg(QDir::toNativeSeparators(file)));
        return std::nullopt;
    }
    if (info.size() > kMaxFleetRecordBytes) {
        failWith(error, u"%1 is %2 MiB, more than the %3 MiB a fleet record may be; not read"_s.arg(
                            QDir::toNativeSeparators(file), QString::number(info.size() >> 20),
                            QString::number(kMaxFleetRecordBytes >> 20)));
        return std::nullopt;
    }
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) {
        failWith(error, u"Could not read %1: %2"_s.arg(QDir::toNativeSeparators(file), f.errorString()));
        return std::nullopt;
    }
    const QByteArray bytes = f.read(kMaxFleetRecordBytes + 1);
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
        failWith(error, pe.error != QJsonParseError::NoError
                            ? u"%1 is not valid JSON (%2 at byte %3)"_s
                                  .arg(QDir::toNativeSeparators(file), pe.errorString())
                                  .arg(pe.offset)
                            : u"%1 does not hold a JSON object"_s.arg(QDir::toNativeSeparators(file)));
        return std::nullopt;
    }
    QString why;
    auto record = fromJson(doc.object(), &why);
    if (!record) {
        failWith(error, u"%1: %2"_s.arg(QDir::toNativeSeparators(file), why));
        return std::nullopt;
    }
    return record;
}

QList<FleetRecord> FleetRecord::loadAll(const QString &workspacePath, QStringList *warnings) {
    QList<FleetRecord> out;
    const QDir d(fleetRecordFolder(workspacePath));
    if (!d.exists())
        return out;
    const QStringList files = d.entryList({u"*.json"_s}, QDir::Files, QDir::Name);
    for (const QString &name : files) {
        QString why;
        auto r = load(d.filePath(name), &why);
        if (r)
            out.append(std::move(*r));
        else if (warnings)
            warnings->append(why);
    }
    std::stable_sort(out.begin(), out.end(), [](const FleetRecord &a, const FleetRecord &b) {
        if (a.createdAt != b.createdAt)
            return a.createdAt > b.createdAt;
        return a.id > b.id;
    });
    return out;
}

QString FleetRecord::newId() {
    // Milliseconds too: two records started within one second (a script, a test) keep their own files.
    return u"fleet-"_s + QDateTime::currentDateTimeUtc().toString(u"yyyyMMdd-HHmmss-zzz"_s);
}

} // namespace moetune
