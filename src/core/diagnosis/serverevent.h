// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/framework.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include <optional>

namespace moetune {

// A line that marks where a server start begins or where it became ready (docs/servers.md section 6):
// SGLang's "server_args=ServerArgs(" and "The server is fired up and ready to roll!"; vLLM's "vLLM API server
// version", "Starting vLLM API server ... on http://..." and uvicorn's "Application startup complete.".
struct ServerEvent {
    enum class Kind { Start, Ready };
    Kind kind = Kind::Start;
    Framework framework = Framework::Unknown; // Unknown for uvicorn's line, which both servers print
    // Among a start's readiness lines the strongest names the moment it serves: SGLang's own line (3)
    // comes after its warm-up, vLLM's "Starting vLLM API server" (2), uvicorn's line (1).
    int strength = 0;
    qsizetype matchStart = 0; // bytes of the cleaned line
    qsizetype matchLength = 0;

    static std::optional<ServerEvent> parse(QByteArrayView cleanedLine);
    // The byte literals every such line contains one of (the reader's prefilter).
    static const QList<QByteArray> &literals();
};

} // namespace moetune
