// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/serverevent.h"

namespace moetune {

namespace {

struct Marker {
    QByteArrayView literal;
    ServerEvent::Kind kind;
    Framework framework;
    int strength;
    QByteArrayView needsAfter; // a second literal that must follow the first ("" = none)
};

constexpr Marker markers[] = {
    {"server_args=ServerArgs(", ServerEvent::Kind::Start, Framework::SGLang, 0, ""},
    {"vLLM API server version", ServerEvent::Kind::Start, Framework::VLLM, 0, ""},
    {"The server is fired up and ready to roll", ServerEvent::Kind::Ready, Framework::SGLang, 3, ""},
    {"Starting vLLM API server", ServerEvent::Kind::Ready, Framework::VLLM, 2, " on http"},
    {"Application startup complete", ServerEvent::Kind::Ready, Framework::Unknown, 1, ""},
};

} // namespace

const QList<QByteArray> &ServerEvent::literals() {
    static const QList<QByteArray> list = [] {
        QList<QByteArray> out;
        for (const Marker &m : markers)
            out.append(m.literal.toByteArray());
        return out;
    }();
    return list;
}

std::optional<ServerEvent> ServerEvent::parse(QByteArrayView cleanedLine) {
    for (const Marker &m : markers) {
        const qsizetype at = cleanedLine.indexOf(m.literal);
        if (at < 0)
            continue;
        qsizetype length = m.literal.size();
        if (!m.needsAfter.isEmpty()) {
            const qsizetype after = cleanedLine.sliced(at + length).indexOf(m.needsAfter);
            if (after < 0)
                continue;
            // Through the URL: "Starting vLLM API server 0 on http://0.0.0.0:8000".
            qsizetype end = at + length + after + m.needsAfter.size();
            while (end < cleanedLine.size() && cleanedLine[end] != ' ' && cleanedLine[end] != '\t')
                ++end;
            length = end - at;
        }
        ServerEvent e;
        e.kind = m.kind;
        e.framework = m.framework;
        e.strength = m.strength;
        e.matchStart = at;
        e.matchLength = length;
        return e;
    }
    return std::nullopt;
}

} // namespace moetune
