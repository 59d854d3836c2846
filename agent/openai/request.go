package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/baton-dev/baton/agent"
)

// errorPrefix marks a failed tool's result: Chat Completions has no is_error
// field, so the model learns it from the content.
const errorPrefix = "Error: "

// params maps req to the SDK's request.
func (p *Provider) params(req agent.Request) (sdk.ChatCompletionNewParams, error) {
	params := sdk.ChatCompletionNewParams{
		Model: p.model,
		// Ask for the usage chunk at the end of the stream.
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if req.MaxTokens > 0 {
		// OpenAI's newer models refuse max_tokens; compatible servers
		// (Ollama, llama.cpp) know only max_tokens.
		if p.official {
			params.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	messages, err := messageParams(req.Messages)
	if err != nil {
		return params, err
	}
	params.Messages = append(params.Messages, messages...)

	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	if req.Schema != nil {
		schema := req.Schema.JSON
		if !isObject(schema) {
			return params, badRequest(fmt.Sprintf("the schema %q is not a JSON object", req.Schema.Name))
		}
		format := shared.ResponseFormatJSONSchemaJSONSchemaParam{
			Name:   agent.SchemaName(req.Schema.Name),
			Strict: sdk.Bool(true),
			Schema: schema,
		}
		if req.Schema.Description != "" {
			format.Description = sdk.String(req.Schema.Description)
		}
		params.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: format},
		}
	}
	return params, nil
}

// messageParams maps a conversation. An assistant message becomes one
// assistant message with its text and tool calls; a user message becomes one
// tool message per result, first, as they must follow the assistant message
// that called them, then a user message with its text.
func messageParams(in []agent.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var out []sdk.ChatCompletionMessageParamUnion
	for i, m := range in {
		var (
			text    strings.Builder
			calls   []sdk.ChatCompletionMessageToolCallUnionParam
			results []sdk.ChatCompletionMessageParamUnion
		)
		for _, part := range m.Parts {
			switch part := part.(type) {
			case agent.TextPart:
				text.WriteString(part.Text)
			case agent.ToolCallPart:
				if m.Role != agent.RoleAssistant {
					return nil, badRequest(fmt.Sprintf("message %d: a tool call can only come from the assistant", i))
				}
				args := strings.TrimSpace(string(part.Input))
				if args == "" {
					args = "{}"
				}
				if !jsonValid(args) {
					return nil, badRequest(fmt.Sprintf("message %d: the input of tool call %q is not JSON", i, part.Name))
				}
				calls = append(calls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID:       part.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: part.Name, Arguments: args},
					},
				})
			case agent.ToolResultPart:
				if m.Role != agent.RoleUser {
					return nil, badRequest(fmt.Sprintf("message %d: a tool result can only come from the user", i))
				}
				content := part.Content
				if part.IsError {
					content = errorPrefix + content
				}
				results = append(results, sdk.ToolMessage(content, part.CallID))
			default:
				return nil, badRequest(fmt.Sprintf("message %d has a part of unknown type %T", i, part))
			}
		}
		switch m.Role {
		case agent.RoleUser:
			out = append(out, results...)
			if text.Len() > 0 {
				out = append(out, sdk.UserMessage(text.String()))
			}
		case agent.RoleAssistant:
			if text.Len() == 0 && len(calls) == 0 {
				continue
			}
			assistant := sdk.ChatCompletionAssistantMessageParam{ToolCalls: calls}
			if text.Len() > 0 {
				assistant.Content.OfString = sdk.String(text.String())
			}
			out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &assistant})
		default:
			return nil, badRequest(fmt.Sprintf("message %d has role %q; only user and assistant are allowed", i, m.Role))
		}
	}
	return out, nil
}

// toolParam maps a tool definition as a function tool.
func toolParam(t agent.Tool) (sdk.ChatCompletionToolUnionParam, error) {
	if t.Name == "" {
		return sdk.ChatCompletionToolUnionParam{}, badRequest("a tool has no name")
	}
	parameters := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	if len(strings.TrimSpace(string(t.InputSchema))) > 0 {
		parameters = nil
		if err := json.Unmarshal(t.InputSchema, &parameters); err != nil || parameters == nil {
			return sdk.ChatCompletionToolUnionParam{}, badRequest(fmt.Sprintf("the input schema of tool %q is not a JSON object", t.Name))
		}
	}
	def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: parameters}
	if t.Description != "" {
		def.Description = sdk.String(t.Description)
	}
	return sdk.ChatCompletionFunctionTool(def), nil
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// jsonValid reports whether s is one JSON value.
func jsonValid(s string) bool { return json.Valid([]byte(s)) }
