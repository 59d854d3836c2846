package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/baton-dev/baton/agent"
)

// emptyObjectSchema is the input schema of a tool that takes no arguments.
const emptyObjectSchema = `{"type":"object","properties":{}}`

// params maps req to the SDK's request. With a schema it also returns the name
// of the tool that carries the structured output.
func (p *Provider) params(req agent.Request) (sdk.MessageNewParams, string, error) {
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	params := sdk.MessageNewParams{
		Model:     p.model,
		MaxTokens: maxTokens,
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	messages, err := messageParams(req.Messages)
	if err != nil {
		return params, "", err
	}
	params.Messages = messages

	for _, t := range req.Tools {
		tool, err := toolParam(t.Name, t.Description, t.InputSchema)
		if err != nil {
			return params, "", err
		}
		params.Tools = append(params.Tools, tool)
	}
	var schemaTool string
	if req.Schema != nil {
		// Structured output is a tool the model must call: its input is the
		// answer. The caller validates it against the schema.
		schemaTool = agent.SchemaName(req.Schema.Name)
		desc := req.Schema.Description
		if desc == "" {
			desc = "Record the answer as a JSON object matching the input schema."
		}
		tool, err := toolParam(schemaTool, desc, req.Schema.JSON)
		if err != nil {
			return params, "", err
		}
		params.Tools = append(params.Tools, tool)
		params.ToolChoice = sdk.ToolChoiceParamOfTool(schemaTool)
	}
	return params, schemaTool, nil
}

// turn is a message being built: tool results first, as the API requires them
// at the start of a user turn, then everything else in order.
type turn struct {
	role    sdk.MessageParamRole
	results []sdk.ContentBlockParamUnion
	rest    []sdk.ContentBlockParamUnion
}

// messageParams maps a conversation. Consecutive messages of one role become
// one turn, so tool results given as separate messages still answer their
// assistant turn together in the user turn that follows it.
func messageParams(in []agent.Message) ([]sdk.MessageParam, error) {
	var turns []turn
	for i, m := range in {
		var role sdk.MessageParamRole
		switch m.Role {
		case agent.RoleUser:
			role = sdk.MessageParamRoleUser
		case agent.RoleAssistant:
			role = sdk.MessageParamRoleAssistant
		default:
			return nil, badRequest(fmt.Sprintf("message %d has role %q; only user and assistant are allowed", i, m.Role))
		}
		var t turn
		for _, part := range m.Parts {
			switch part := part.(type) {
			case agent.TextPart:
				// The API refuses empty text blocks.
				if strings.TrimSpace(part.Text) != "" {
					t.rest = append(t.rest, sdk.NewTextBlock(part.Text))
				}
			case agent.ToolCallPart:
				if m.Role != agent.RoleAssistant {
					return nil, badRequest(fmt.Sprintf("message %d: a tool call can only come from the assistant", i))
				}
				input, err := toolInput(part.Input)
				if err != nil {
					return nil, badRequest(fmt.Sprintf("message %d: the input of tool call %q is not JSON", i, part.Name))
				}
				t.rest = append(t.rest, sdk.NewToolUseBlock(part.ID, input, part.Name))
			case agent.ToolResultPart:
				if m.Role != agent.RoleUser {
					return nil, badRequest(fmt.Sprintf("message %d: a tool result can only come from the user", i))
				}
				t.results = append(t.results, toolResult(part))
			default:
				return nil, badRequest(fmt.Sprintf("message %d has a part of unknown type %T", i, part))
			}
		}
		if len(t.results) == 0 && len(t.rest) == 0 {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].role == role {
			turns[n-1].results = append(turns[n-1].results, t.results...)
			turns[n-1].rest = append(turns[n-1].rest, t.rest...)
			continue
		}
		t.role = role
		turns = append(turns, t)
	}
	out := make([]sdk.MessageParam, 0, len(turns))
	for _, t := range turns {
		out = append(out, sdk.MessageParam{Role: t.role, Content: append(t.results, t.rest...)})
	}
	return out, nil
}

// toolResult maps a tool result. is_error is sent only when set, and empty
// content is left out because the API refuses empty text blocks.
func toolResult(r agent.ToolResultPart) sdk.ContentBlockParamUnion {
	block := sdk.ToolResultBlockParam{ToolUseID: r.CallID}
	if r.Content != "" {
		block.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: r.Content}}}
	}
	if r.IsError {
		block.IsError = param.NewOpt(true)
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &block}
}

// toolInput returns a tool call's input as JSON to send; empty input is {}.
func toolInput(raw json.RawMessage) (json.RawMessage, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !jsonValid(raw) {
		return nil, fmt.Errorf("tool input is not JSON")
	}
	return raw, nil
}

// toolParam maps a tool definition, sending its schema as it was written.
func toolParam(name, description string, schema json.RawMessage) (sdk.ToolUnionParam, error) {
	if name == "" {
		return sdk.ToolUnionParam{}, badRequest("a tool has no name")
	}
	if len(strings.TrimSpace(string(schema))) == 0 {
		schema = json.RawMessage(emptyObjectSchema)
	}
	var probe map[string]any
	if err := json.Unmarshal(schema, &probe); err != nil {
		return sdk.ToolUnionParam{}, badRequest(fmt.Sprintf("the input schema of tool %q is not a JSON object", name))
	}
	tool := sdk.ToolParam{
		Name:        name,
		InputSchema: param.Override[sdk.ToolInputSchemaParam](schema),
	}
	if description != "" {
		tool.Description = param.NewOpt(description)
	}
	return sdk.ToolUnionParam{OfTool: &tool}, nil
}

// jsonValid reports whether raw is one JSON value.
func jsonValid(raw []byte) bool { return json.Valid(raw) }
