// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// The MoE shapes of common models (resources/models/moe-models.json, from each model's config.json), so
// a job from a log that names its model gets K and top-k without a probe. Extendable like the rules:
// *.json files of the same format in userFolder() are read too, and win over the bundled entries.
class MoeModelCatalog {
public:
    struct Model {
        QStringList names; // prefixes of the served path's last part, case-insensitive
        int hiddenSize = 0;
        int experts = 0;
        int topk = 0;
        int moeIntermediateSize = 0;
        int sharedExperts = 0;
        QString file; // where it was read
    };

    static QString userFolder(); // AppConfigLocation + "/models": ~/.config/moetune/moetune/models
    // The bundled file and then every *.json of userFolder() (unreadable files are reported, not fatal).
    static MoeModelCatalog load(QStringList *errors = nullptr);
    static MoeModelCatalog fromJson(const QByteArray &json, const QString &file, QString *error);

    // The entry whose name is the longest prefix of the last part of modelPath
    // ("Qwen/Qwen3-30B-A3B-Instruct-2507" -> Qwen3-30B-A3B); user entries first.
    std::optional<Model> find(const QString &modelPath) const;
    // find(), only when the model has the config file's E (or E - 1: a fused shared expert) experts.
    std::optional<Model> findForShape(const QString &modelPath, int fileExperts) const;
    const QList<Model> &models() const { return m_models; }

private:
    QList<Model> m_models;
};

} // namespace moetune
