// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// The fixed, seeded traffic of a serving benchmark (docs/servers.md section 10): random prompts of one input
// and output length, a number of prompts, one benchmark run per concurrency, a seed so that every leg
// sends the same requests. Presets for decode-heavy and prefill-heavy traffic; every field editable.
struct ServingWorkload {
    QString preset = QStringLiteral("decode"); // the preset it started from ("custom" once edited by hand)
    int inputLen = 256;
    int outputLen = 512;
    int numPrompts = 200;
    QList<int> concurrencies = defaultConcurrencies(); // 1, 16, 64
    int seed = 0;

    static QList<int> defaultConcurrencies();
    static QStringList presetIds(); // "decode", "prefill", "standard"
    // A preset by id ("decode", "prefill", "standard"); nullopt for an unknown id.
    static std::optional<ServingWorkload> fromPreset(const QString &id);
    static QString presetDescription(const QString &id);

    // Empty when usable, else one sentence naming the field to fix.
    QString validate() const;
    // "decode: 256 in / 512 out tokens, 200 prompts, concurrency 1, 16, 64, seed 0"
    QString summary() const;
    // Parses "1,16,64" (also "1 16 64"); nullopt with a sentence for anything else.
    static std::optional<QList<int>> parseConcurrencies(const QString &text, QString *error = nullptr);

    QJsonObject toJson() const;
    static ServingWorkload fromJson(const QJsonObject &o);
    bool operator==(const ServingWorkload &) const = default;
};

} // namespace moetune
